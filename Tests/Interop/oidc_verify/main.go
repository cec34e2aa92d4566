// oidc_verify: verifies AnonAuth ID tokens with go-oidc (Debian's
// golang-github-coreos-go-oidc-dev), given nothing but the issuer URL, the audience and
// the CA that signed the daemon's certificate. One token a line on stdin; one line out
// for each: "ok <sub>" or "refused <go-oidc's error>".
//
// Usage: oidc_verify ISSUER AUDIENCE CA_FILE [skip-expiry]
// skip-expiry only tells which check refuses a token that is also expired.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io/ioutil"
	"net/http"
	"os"

	"github.com/coreos/go-oidc"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: oidc_verify ISSUER AUDIENCE CA_FILE [skip-expiry]")
		os.Exit(2)
	}
	issuer, audience, caFile := os.Args[1], os.Args[2], os.Args[3]
	pem, err := ioutil.ReadFile(caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	// A custom TLS configuration turns Go's automatic HTTP/2 off; asking for it again
	// makes discovery and the key set come over h2, as Go's default client would fetch them.
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
	}}
	ctx := oidc.ClientContext(context.Background(), client)
	provider, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		fmt.Fprintln(os.Stderr, "discovery:", err)
		os.Exit(1)
	}
	config := &oidc.Config{ClientID: audience}
	if len(os.Args) > 4 && os.Args[4] == "skip-expiry" {
		config.SkipExpiryCheck = true
	}
	verifier := provider.Verifier(config)
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(make([]byte, 64*1024), 64*1024)
	for lines.Scan() {
		token, err := verifier.Verify(ctx, lines.Text())
		if err != nil {
			fmt.Println("refused", err)
		} else {
			fmt.Println("ok", token.Subject)
		}
	}
}
