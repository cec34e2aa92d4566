"""The standard gRPC services through stock clients: grpcio-health-checking's Check and
Watch, and grpcio-reflection's descriptor database, against the real daemon over TLS.
The reflection test calls SignUp with types built only from the reflected descriptors:
no .proto file and no generated code at hand."""

import pathlib
import signal
import subprocess
import tempfile
import threading

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from conftest import ROOT, TEST_DAEMON_FLAGS, Daemon

SERVICES = [
    "anonauth.v1.AccountService", "anonauth.v1.AdminService", "anonauth.v1.HealthService",
    "anonauth.v1.TokenService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
]


def channel(daemon):
    """A stock grpcio channel over TLS with the dev CA (the certificate names localhost)."""
    with open(daemon.ca_file, "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    host, port = daemon.rpc
    return grpc.secure_channel(
        f"{host}:{port}", credentials, options=[("grpc.ssl_target_name_override", "localhost")])


def test_own_standard_protos_match_grpcio():
    """Protos-standard/ was written from the protocols' facts: its names, numbers and
    types agree with the descriptors grpcio's packages ship."""
    out = tempfile.mktemp(suffix=".pb")
    standard = ROOT / "Protos-standard"
    files = sorted(str(p.relative_to(standard)) for p in standard.rglob("*.proto"))
    subprocess.run(["protoc", f"-I{standard}", f"--descriptor_set_out={out}", *files], check=True)
    ours = descriptor_pb2.FileDescriptorSet.FromString(pathlib.Path(out).read_bytes())

    def shape(file):
        messages = {}

        def walk(message, prefix):
            name = prefix + message.name
            messages[name] = sorted(
                (f.name, f.number, f.type, f.label, f.type_name, f.HasField("oneof_index")) for f in message.field)
            for enum in message.enum_type:
                messages[name + "." + enum.name] = sorted((v.name, v.number) for v in enum.value)
            for nested in message.nested_type:
                walk(nested, name + ".")

        for message in file.message_type:
            walk(message, "")
        services = {
            s.name: sorted((m.name, m.input_type, m.output_type, m.client_streaming, m.server_streaming)
                           for m in s.method)
            for s in file.service}
        return messages, services

    for module in (health_pb2, reflection_pb2):
        theirs = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(theirs)
        mine = next(f for f in ours.file if f.package == theirs.package)
        assert shape(mine) == shape(theirs), theirs.package
    v1 = next(f for f in ours.file if f.package == "grpc.reflection.v1")
    alpha = next(f for f in ours.file if f.package == "grpc.reflection.v1alpha")
    assert shape(v1)[0].keys() == shape(alpha)[0].keys()


def test_health_check_follows_readiness(daemon):
    with channel(daemon) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        serving = health_pb2.HealthCheckResponse.SERVING
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=10).status == serving
        for service in SERVICES:
            assert stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status == serving
        with pytest.raises(grpc.RpcError) as error:
            stub.Check(health_pb2.HealthCheckRequest(service="anonauth.v1.NoSuchService"), timeout=10)
        assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_watch_sees_not_serving_at_sigterm():
    daemon = Daemon(extra=TEST_DAEMON_FLAGS)
    try:
        with channel(daemon) as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            unknown = stub.Watch(health_pb2.HealthCheckRequest(service="anonauth.v1.NoSuchService"))
            assert next(unknown).status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
            watch = stub.Watch(health_pb2.HealthCheckRequest())
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
            seen = []
            reader = threading.Thread(target=watch_statuses, args=(watch, seen))
            reader.start()
            daemon.proc.send_signal(signal.SIGTERM)
            reader.join(timeout=60)
            assert not reader.is_alive()
            assert seen[0] == health_pb2.HealthCheckResponse.NOT_SERVING, seen
            # The stream then ends with UNAVAILABLE (the daemon is going away).
            assert seen[-1] == grpc.StatusCode.UNAVAILABLE, seen
            unknown.cancel()
    finally:
        assert daemon.stop() == 0


def watch_statuses(stream, seen):
    """Appends each status the stream sends to `seen` as it comes, then the code it ends
    with."""
    try:
        for response in stream:
            seen.append(response.status)
    except grpc.RpcError as error:
        seen.append(error.code())


def test_reflection_lists_and_resolves_then_calls_sign_up_with_no_proto(daemon):
    with channel(daemon) as ch:
        database = ProtoReflectionDescriptorDatabase(ch)
        assert sorted(database.get_services()) == SERVICES
        pool = descriptor_pool.DescriptorPool(database)
        service = pool.FindServiceByName("anonauth.v1.AccountService")
        sign_up = service.methods_by_name["SignUp"]
        assert sign_up.input_type.full_name == "anonauth.v1.SignUpRequest"
        # admin.proto comes with its import, account.proto.
        assert pool.FindFileByName("anonauth/v1/admin.proto").dependencies[0].name == "anonauth/v1/account.proto"
        request_type = message_factory.GetMessageClass(sign_up.input_type)
        response_type = message_factory.GetMessageClass(sign_up.output_type)
        request = request_type()
        request.anonymous.SetInParent()
        call = ch.unary_unary(
            "/anonauth.v1.AccountService/SignUp", request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_type.FromString)
        response = call(request, metadata=[("x-api-key", daemon.client_json["api_key"])], timeout=30)
        assert response.is_anonymous and response.is_new_user
        assert response.local_id and response.id_token.count(".") == 2


def test_reflection_v1_answers_like_v1alpha(daemon):
    """grpcio-reflection's client speaks v1alpha; v1 has the same messages under another
    package, so v1alpha's types call it."""
    with channel(daemon) as ch:
        info = ch.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString)
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.health.v1.Health.Watch"),
            reflection_pb2.ServerReflectionRequest(file_by_filename="no/such.proto"),
            reflection_pb2.ServerReflectionRequest(all_extension_numbers_of_type="anonauth.v1.SignUpRequest"),
        ]
        responses = list(info(iter(requests), timeout=10))
        assert [r.original_request for r in responses] == requests
        assert sorted(s.name for s in responses[0].list_services_response.service) == SERVICES
        files = responses[1].file_descriptor_response.file_descriptor_proto
        assert [descriptor_pb2.FileDescriptorProto.FromString(f).name for f in files] == ["grpc/health/v1/health.proto"]
        assert responses[2].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
        assert responses[3].all_extension_numbers_response.base_type_name == "anonauth.v1.SignUpRequest"
        assert list(responses[3].all_extension_numbers_response.extension_number) == []
