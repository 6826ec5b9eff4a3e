package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * What every scenario consumer process shares ({@link ConsumerApp}, {@link ShareConsumerApp}): the
 * commands on stdin ({@code start ORIGIN_NANOS}, {@code stop}, {@code stall ...}, the rest queued
 * for the poll loop), the wait for the start, the trace lines on stdout timed by the shared clock,
 * and runs of empty polls written as one {@code poll} line.
 */
abstract class ConsumerProcess {
  static final ObjectMapper JSON = new ObjectMapper();
  static final PrintStream OUT =
      new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);

  protected final JsonNode spec;
  protected final String name;
  /** Commands for the poll loop, taken between polls. */
  protected final ConcurrentLinkedQueue<String[]> commands = new ConcurrentLinkedQueue<>();
  protected volatile boolean stopping;
  protected volatile Clock clock;
  private final Object startLock = new Object();
  private int emptyPolls;
  private long emptySinceUs;

  ConsumerProcess(JsonNode spec) {
    this.spec = spec;
    this.name = spec.path("name").asText();
  }

  /** Wakes the client out of poll() (a stop while it waits). */
  // The client's properties: the scenario consumer's `config` as strings, records read as bytes.
  protected Properties clientProperties() {
    Properties props = new Properties();
    spec.path("config").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
    props.put("key.deserializer", ByteArrayDeserializer.class.getName());
    props.put("value.deserializer", ByteArrayDeserializer.class.getName());
    return props;
  }

  protected abstract void wakeup();

  /** Reads the commands on a daemon thread from now on. */
  protected void startCommandReader() {
    Thread reader = new Thread(this::readCommands, "oracle-commands");
    reader.setDaemon(true);
    reader.start();
  }

  /** Says the process is ready, then waits for {@code start}. */
  protected void awaitStart() throws InterruptedException {
    OUT.println("{\"ready\":true}");
    synchronized (startLock) {
      while (clock == null) startLock.wait();
    }
  }

  /** A poll that returned nothing: counted into the next {@code poll} line. */
  protected void emptyPoll() {
    if (emptyPolls++ == 0) emptySinceUs = clock.nowUs();
  }

  /** Writes the empty polls counted so far as one {@code poll} line. */
  protected void flushPolls() {
    if (emptyPolls == 0) return;
    ObjectNode f = JSON.createObjectNode();
    f.put("count", 0);
    f.put("polls", emptyPolls);
    f.put("first_us", emptySinceUs);
    emptyPolls = 0;
    emit("poll", f);
  }

  private void readCommands() {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        String[] cmd = line.trim().split(" ", 2);
        switch (cmd[0]) {
          case "start":
            synchronized (startLock) {
              clock = new Clock(Long.parseLong(cmd[1]));
              startLock.notifyAll();
            }
            break;
          case "stall":
            emit("consumer.stall", null);
            commands.add(cmd);
            break;
          case "stop":
            emit("consumer.stop", null);
            stopping = true;
            wakeup();
            break;
          default:
            commands.add(cmd);
        }
      }
    } catch (Exception e) {
      // the orchestrator went away
    }
    // stdin closed: the orchestrator is gone, so is this run
    Runtime.getRuntime().halt(3);
  }

  protected void emitError(String where, RuntimeException e) {
    ObjectNode f = JSON.createObjectNode();
    f.put("where", where);
    f.put("error", e.getClass().getSimpleName());
    f.put("message", String.valueOf(e.getMessage()));
    emit("consumer.error", f);
  }

  protected synchronized void emit(String type, ObjectNode fields) {
    ObjectNode o = JSON.createObjectNode();
    o.put("t_us", clock == null ? 0 : clock.nowUs());
    o.put("type", type);
    o.put("consumer", name);
    if (fields != null) o.setAll(fields);
    OUT.println(o.toString());
  }
}
