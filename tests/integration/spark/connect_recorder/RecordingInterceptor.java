import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.sparkproject.connect.grpc.ForwardingServerCallListener;
import org.sparkproject.connect.grpc.Metadata;
import org.sparkproject.connect.grpc.ServerCall;
import org.sparkproject.connect.grpc.ServerCallHandler;
import org.sparkproject.connect.grpc.ServerInterceptor;

/**
 * Test only (tests/integration/spark/spark_servers.py): a Spark Connect server interceptor
 * (spark.connect.grpc.interceptor.classes) that appends every request the server receives, whole, in protobuf
 * text, to the file the system property streamhub.test.requests names, each after a line "== <method>". The
 * server's own records of a request are abbreviated (a few levels deep); this is all of what a client sent.
 */
public final class RecordingInterceptor implements ServerInterceptor {
  private static final Path FILE = Path.of(System.getProperty("streamhub.test.requests"));

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String method = call.getMethodDescriptor().getFullMethodName();
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<Q>(
        next.startCall(call, headers)) {
      @Override
      public void onMessage(Q message) {
        record(method, message);
        super.onMessage(message);
      }
    };
  }

  private static synchronized void record(String method, Object message) {
    try {
      Files.writeString(
          FILE,
          "== " + method + "\n" + message + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException error) {
      throw new UncheckedIOException(error);
    }
  }
}
