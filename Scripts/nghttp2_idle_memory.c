/*
 * What libnghttp2 alone keeps for an idle HTTP/2 server connection: N server sessions
 * made the way the daemon makes its own (no closed streams kept, MAX_CONCURRENT_STREAMS
 * and INITIAL_WINDOW_SIZE announced), each fed a client's preface, SETTINGS and (unless
 * "noreq" is given) one gRPC-shaped request answered with a trailers-only reply, all in
 * memory; the process's resident memory before and after, per session. A short-lived
 * client session makes each peer's bytes and is freed at once, so what stays is the
 * servers'. The daemon's own idle figure (`anonauth bench idle --protocol grpc`) minus
 * this is what the Swift side of an HTTP/2 connection holds.
 *
 *   cc -O2 -o /tmp/nghttp2_idle_memory Scripts/nghttp2_idle_memory.c -lnghttp2
 *   /tmp/nghttp2_idle_memory [N] [noreq]
 */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long resident_kib(void) {
  FILE *file = fopen("/proc/self/status", "r");
  char line[256];
  long kib = 0;
  if (!file) return 0;
  while (fgets(line, sizeof line, file))
    if (!strncmp(line, "VmRSS:", 6)) sscanf(line + 6, "%ld", &kib);
  fclose(file);
  return kib;
}

#define NV(name, value) {(uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1, sizeof(value) - 1, 0}

/* The request body: one empty length-prefixed message. */
static ssize_t read_body(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *user) {
  (void)session, (void)id, (void)length, (void)source, (void)user;
  memset(buf, 0, 5);
  *flags |= NGHTTP2_DATA_FLAG_EOF;
  return 5;
}

/* The server answers a finished request trailers-only, as gRPC errors are answered. */
static int on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *user) {
  (void)user;
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    nghttp2_nv reply[] = {NV(":status", "200"), NV("content-type", "application/grpc"), NV("grpc-status", "0")};
    nghttp2_submit_response(session, frame->hd.stream_id, reply, 3, NULL);
  }
  return 0;
}

int main(int argc, char **argv) {
  int count = argc > 1 ? atoi(argv[1]) : 10000;
  int request = !(argc > 2 && !strcmp(argv[2], "noreq"));
  nghttp2_session_callbacks *server_callbacks, *client_callbacks;
  nghttp2_session_callbacks_new(&server_callbacks);
  nghttp2_session_callbacks_set_on_frame_recv_callback(server_callbacks, on_frame);
  nghttp2_session_callbacks_new(&client_callbacks);
  nghttp2_option *option;
  nghttp2_option_new(&option);
  nghttp2_option_set_no_closed_streams(option, 1);
  nghttp2_session **servers = calloc((size_t)count, sizeof *servers);
  if (!servers) return 1;
  long before = resident_kib();
  for (int i = 0; i < count; i++) {
    nghttp2_session *client;
    nghttp2_session_client_new(&client, client_callbacks, NULL);
    nghttp2_submit_settings(client, NGHTTP2_FLAG_NONE, NULL, 0);
    if (request) {
      nghttp2_nv headers[] = {NV(":method", "POST"), NV(":scheme", "https"),
                              NV(":path", "/anonauth.v1.HealthService/Check"), NV(":authority", "127.0.0.1:7443"),
                              NV("content-type", "application/grpc"), NV("te", "trailers")};
      nghttp2_data_provider body = {{0}, read_body};
      nghttp2_submit_request(client, NULL, headers, 6, &body, NULL);
    }
    nghttp2_session_server_new2(&servers[i], server_callbacks, NULL, option);
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                                         {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 65536}};
    nghttp2_submit_settings(servers[i], NGHTTP2_FLAG_NONE, settings, 2);
    for (int turn = 0; turn < 4; turn++) {
      const uint8_t *data;
      ssize_t n;
      while ((n = nghttp2_session_mem_send(client, &data)) > 0) nghttp2_session_mem_recv(servers[i], data, (size_t)n);
      while ((n = nghttp2_session_mem_send(servers[i], &data)) > 0) nghttp2_session_mem_recv(client, data, (size_t)n);
    }
    nghttp2_session_del(client);
  }
  long after = resident_kib();
  printf("%d idle server sessions (%s): %.1f KiB each (resident %ld -> %ld KiB)\n", count,
         request ? "preface, SETTINGS, one stream" : "preface and SETTINGS", (double)(after - before) / count, before,
         after);
  return 0;
}
