package dev.rebalancesim.oracle;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * Real Kafka brokers in KRaft combined mode (broker and controller in one JVM each), bound to
 * 127.0.0.1 only, with storage formatted in a temporary folder. Every broker JVM runs under
 * coreutils {@code timeout -s KILL}, so that none outlives the run even if the oracle is killed.
 */
final class Cluster implements AutoCloseable {
  final int size;
  final Path dir;
  private final String classpath;
  private final long lifetimeSec;
  private final int[] brokerPorts;
  private final int[] controllerPorts;
  private final Process[] processes;
  private final Map<String, String> brokerConfig;

  Cluster(int size, Map<String, String> brokerConfig, Path dir, String classpath, long lifetimeSec) {
    this.size = size;
    this.dir = dir;
    this.classpath = classpath;
    this.lifetimeSec = lifetimeSec;
    this.brokerConfig = brokerConfig;
    brokerPorts = new int[size];
    controllerPorts = new int[size];
    processes = new Process[size];
    for (int i = 0; i < size; i++) {
      brokerPorts[i] = freePort();
      controllerPorts[i] = freePort();
    }
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** FEATURE=LEVEL pairs given to kafka-storage format (e.g. share.version=1). */
  final List<String> features = new ArrayList<>();

  String bootstrap() {
    List<String> l = new ArrayList<>();
    for (int p : brokerPorts) l.add("127.0.0.1:" + p);
    return String.join(",", l);
  }

  Path logDir(int broker) {
    return dir.resolve("broker-" + broker + "-data");
  }

  private Path propsFile(int broker) {
    return dir.resolve("broker-" + broker + ".properties");
  }

  void formatAndStart() throws Exception {
    String clusterId = Uuid.randomUuid().toString();
    List<String> voters = new ArrayList<>();
    for (int i = 0; i < size; i++) voters.add(i + "@127.0.0.1:" + controllerPorts[i]);
    int rf = Math.min(size, 3);
    for (int i = 0; i < size; i++) {
      Map<String, String> p = new TreeMap<>();
      p.put("process.roles", "broker,controller");
      p.put("node.id", Integer.toString(i));
      p.put("controller.quorum.voters", String.join(",", voters));
      p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPorts[i] + ",CONTROLLER://127.0.0.1:" + controllerPorts[i]);
      p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPorts[i]);
      p.put("controller.listener.names", "CONTROLLER");
      p.put("inter.broker.listener.name", "PLAINTEXT");
      p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
      p.put("log.dirs", logDir(i).toString());
      p.put("num.partitions", "1");
      p.put("default.replication.factor", Integer.toString(rf));
      p.put("offsets.topic.replication.factor", Integer.toString(rf));
      p.put("transaction.state.log.replication.factor", Integer.toString(rf));
      p.put("transaction.state.log.min.isr", "1");
      p.put("share.coordinator.state.topic.replication.factor", Integer.toString(rf));
      p.put("share.coordinator.state.topic.min.isr", "1");
      p.put("auto.create.topics.enable", "false");
      p.put("log.flush.interval.messages", "1");
      p.putAll(brokerConfig);
      if (brokerConfig.containsKey("offsets.topic.replication.factor")) {
        // one broker cannot hold three replicas: Kafka would never create __consumer_offsets
        int asked = Integer.parseInt(brokerConfig.get("offsets.topic.replication.factor"));
        p.put("offsets.topic.replication.factor", Integer.toString(Math.min(asked, size)));
      }
      StringBuilder sb = new StringBuilder();
      p.forEach((k, v) -> sb.append(k).append('=').append(v).append('\n'));
      Files.writeString(propsFile(i), sb.toString(), StandardCharsets.UTF_8);
      // kafka-storage format, in this JVM (one JVM start fewer on a loaded machine)
      Path log = dir.resolve("format-" + i + ".log");
      try (java.io.PrintStream ps = new java.io.PrintStream(log.toFile(), StandardCharsets.UTF_8)) {
        List<String> args = new ArrayList<>(List.of("format", "--cluster-id", clusterId,
            "--config", propsFile(i).toString(), "--ignore-formatted"));
        for (String f : features) {
          args.add("--feature");
          args.add(f);
        }
        int rc = kafka.tools.StorageTool.execute(args.toArray(new String[0]), ps);
        if (rc != 0) {
          throw new IllegalStateException("kafka-storage format of broker-" + i + " failed: " + tail(log));
        }
      }
    }
    for (int i = 0; i < size; i++) start(i);
  }

  void start(int broker) throws IOException {
    List<String> jvm = new ArrayList<>();
    if (requestLog()) jvm.add("-Dlog4j2.configurationFile=" + requestLogConfig(broker));
    processes[broker] = java(dir.resolve("broker-" + broker + ".log"), jvm, "kafka.Kafka", propsFile(broker).toString());
  }

  /** With ORACLE_REQUEST_LOG=1, each broker writes Kafka's request log (kafka.request.logger at
   *  DEBUG: one line per request, the wall-clock epoch ms of its completion then "Completed request:" and its JSON with its totalTimeMs, requestQueueTimeMs,
   *  localTimeMs, remoteTimeMs, responseQueueTimeMs and sendTimeMs) to requests-broker-N.log in the
   *  run's folder; tools/kafka-oracle/request-times reads them. Off by default: the log costs the
   *  broker a JSON rendering of every request. */
  static boolean requestLog() {
    return "1".equals(System.getenv("ORACLE_REQUEST_LOG"));
  }

  Path requestLogFile(int broker) {
    return dir.resolve("requests-broker-" + broker + ".log");
  }

  private Path requestLogConfig(int broker) throws IOException {
    Path f = dir.resolve("log4j2-broker-" + broker + ".properties");
    String file = requestLogFile(broker).toString();
    Files.writeString(f, String.join("\n",
        "status = off",
        "rootLogger.level = off",
        "appender.requests.type = File",
        "appender.requests.name = requests",
        "appender.requests.append = true",
        "appender.requests.fileName = " + file,
        "appender.requests.layout.type = PatternLayout",
        "appender.requests.layout.pattern = %d{UNIX_MILLIS} %m%n",
        "logger.requests.name = kafka.request.logger",
        "logger.requests.level = debug",
        "logger.requests.additivity = false",
        "logger.requests.appenderRef.requests.ref = requests", ""), StandardCharsets.UTF_8);
    return f;
  }

  boolean alive(int broker) {
    return processes[broker] != null && processes[broker].isAlive();
  }

  /** SIGTERM to the broker's JVM: Kafka's controlled shutdown, then the process exits (not waited for). */
  void terminate(int broker) {
    Process p = processes[broker];
    if (p == null) return;
    p.descendants().forEach(ProcessHandle::destroy);
  }

  /** SIGKILL, as a crashed machine: no controlled shutdown. */
  void kill(int broker) throws InterruptedException {
    Process p = processes[broker];
    if (p == null) return;
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    p.waitFor(30, TimeUnit.SECONDS);
  }

  Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    return Admin.create(p);
  }

  /** With more than one broker, a broker JVM compiles with C1 only, as the consumer JVMs do: with
   *  C2 as well, the first seconds of a multi-broker run, while every broker compiles, were the
   *  slowest of the run and its replicated writes waited twice as long (docs/fidelity.md, finding
   *  30). The JIT decides how fast Kafka's code runs, never what it does. A single broker keeps the
   *  JVM's default tiered compilation (C1 then C2), on which the one-broker timings were measured;
   *  so does every broker with ORACLE_BROKER_JIT=c2. */
  List<String> jitOptions() {
    if (size == 1 || "c2".equals(System.getenv("ORACLE_BROKER_JIT"))) return List.of();
    return List.of("-XX:TieredStopAtLevel=1");
  }

  private Process java(Path log, List<String> jvmOptions, String main, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add("timeout");
    cmd.add("-s");
    cmd.add("KILL");
    cmd.add(Long.toString(lifetimeSec));
    cmd.add(Oracle.javaBin());
    cmd.add("-Xmx512m");
    cmd.add("-XX:+UseSerialGC");
    cmd.addAll(jitOptions());
    cmd.add("-Djava.awt.headless=true");
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(main);
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    return pb.start();
  }

  static String tail(Path log) {
    try {
      List<String> l = Files.readAllLines(log);
      return String.join(" | ", l.subList(Math.max(0, l.size() - 5), l.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  @Override
  public void close() {
    for (int i = 0; i < size; i++) {
      try {
        kill(i);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
