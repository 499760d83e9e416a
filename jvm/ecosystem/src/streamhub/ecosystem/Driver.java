package streamhub.ecosystem;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.common.utils.Exit;

/**
 * One JVM that runs many of Kafka's command-line tools and client checks, one after the other, so a test session
 * pays the JVM's start-up once instead of once per command.
 *
 * <p>Reads one JSON request per line on stdin and answers one JSON line on stdout:
 * {"main": "org.apache.kafka.tools.TopicCommand", "args": [...], "timeout_s": 60} runs that class's main as its
 * bin/ script would: what it prints is captured, and Kafka's Exit.exit ends the run instead of this JVM, as if the
 * process had ended there (the first code wins and what is printed after it is dropped, since some tools call
 * Exit.exit inside a catch-all block; the shutdown hooks a tool registered, through Exit or the Runtime, then
 * run, as at a JVM's exit: VerifiableProducer flushes and reports in one). Needs
 * --add-opens java.base/java.lang=ALL-UNNAMED to see the Runtime's hooks. {"check": "name", "params": {...}} runs one of {@link ClientChecks}. The answer is {"exit": code, "out":
 * stdout, "err": stderr, "result": the check's result, "seconds": wall time}.
 */
public final class Driver {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Thrown instead of ending the JVM when a tool calls Exit.exit. */
  static final class ToolExited extends RuntimeException {
    final int code;

    ToolExited(int code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  /** What one run printed, how it exited and the hooks it registered. */
  static final class Run {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    final List<Runnable> shutdownHooks = new ArrayList<>();
    Integer exitCode;
    int outAtExit;
    int errAtExit;

    synchronized void exited(int code) {
      if (exitCode == null) {
        exitCode = code;
        outAtExit = out.size();
        errAtExit = err.size();
      }
    }

    synchronized String printed(ByteArrayOutputStream stream, int atExit) {
      byte[] bytes = stream.toByteArray();
      int end = exitCode == null ? bytes.length : Math.min(atExit, bytes.length);
      return new String(bytes, 0, end, StandardCharsets.UTF_8);
    }
  }

  private static volatile Run current;

  private Driver() {}

  public static void main(String[] args) throws Exception {
    PrintStream answers = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    PrintStream realErr = System.err;
    Exit.setExitProcedure((code, message) -> {
      current.exited(code);
      throw new ToolExited(code, message);
    });
    Exit.setShutdownHookAdder((name, hook) -> current.shutdownHooks.add(hook));
    BufferedReader requests = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    ExecutorService runner = Executors.newCachedThreadPool(task -> {
      Thread thread = new Thread(task, "driver-run");
      thread.setDaemon(true);
      return thread;
    });
    answers.println("{\"ready\": true}");
    String line;
    while ((line = requests.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode request = JSON.readTree(line);
      Map<String, Object> answer = run(request, runner, realErr);
      answers.println(JSON.writeValueAsString(answer));
    }
    System.exit(0);
  }

  private static Map<String, Object> run(JsonNode request, ExecutorService runner, PrintStream realErr) {
    Run run = new Run();
    current = run;
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    Map<String, Object> answer = new LinkedHashMap<>();
    long started = System.nanoTime();
    Object result = null;
    double timeoutSeconds = request.path("timeout_s").asDouble(120);
    System.setOut(new PrintStream(run.out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(run.err, true, StandardCharsets.UTF_8));
    Set<Thread> hooksBefore = new HashSet<>(runtimeShutdownHooks().keySet());
    Future<Object> running = runner.submit(() -> {
      try {
        return execute(request);
      } finally {
        for (Runnable hook : run.shutdownHooks) {
          hook.run();
        }
        for (Thread hook : new ArrayList<>(runtimeShutdownHooks().keySet())) {
          if (!hooksBefore.contains(hook)) {
            Runtime.getRuntime().removeShutdownHook(hook);
            hook.run();
          }
        }
      }
    });
    try {
      result = running.get((long) (timeoutSeconds * 1000), TimeUnit.MILLISECONDS);
    } catch (TimeoutException timedOut) {
      running.cancel(true);
      run.exited(124);
      realErr.println("driver: " + request + " timed out after " + timeoutSeconds + " s");
    } catch (ExecutionException failed) {
      Throwable cause = failed.getCause();
      if (cause instanceof InvocationTargetException invoked) {
        cause = invoked.getCause();
      }
      if (!(cause instanceof ToolExited)) {
        cause.printStackTrace(System.err);
        run.exited(1);
      }
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      run.exited(130);
    } finally {
      System.out.flush();
      System.err.flush();
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
    synchronized (run) {
      answer.put("exit", run.exitCode == null ? 0 : run.exitCode);
      answer.put("out", run.printed(run.out, run.outAtExit));
      answer.put("err", run.printed(run.err, run.errAtExit));
    }
    answer.put("result", result);
    answer.put("seconds", (System.nanoTime() - started) / 1e9);
    return answer;
  }

  @SuppressWarnings("unchecked")
  private static Map<Thread, Thread> runtimeShutdownHooks() {
    try {
      Field hooks = Class.forName("java.lang.ApplicationShutdownHooks").getDeclaredField("hooks");
      hooks.setAccessible(true);
      synchronized (Class.forName("java.lang.ApplicationShutdownHooks")) {
        return new LinkedHashMap<>((Map<Thread, Thread>) hooks.get(null));
      }
    } catch (ReflectiveOperationException unreachable) {
      throw new IllegalStateException(unreachable);
    }
  }

  private static Object execute(JsonNode request) throws Exception {
    if (request.has("main")) {
      List<String> args = new ArrayList<>();
      request.path("args").forEach(arg -> args.add(arg.asText()));
      Method main = Class.forName(request.get("main").asText()).getMethod("main", String[].class);
      main.invoke(null, (Object) args.toArray(new String[0]));
      return null;
    }
    String check = request.path("check").asText();
    Map<String, Object> params = JSON.convertValue(request.path("params"), Map.class);
    return ClientChecks.run(check, params);
  }
}
