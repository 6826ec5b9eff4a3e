package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.utils.internals.AppInfoParser;

/**
 * Runs one scenario under one variant on real Kafka and writes {@code OUT/VARIANT/trace.jsonl}
 * and {@code OUT/VARIANT/meta.json}.
 *
 * <p>Usage: {@code Oracle SCENARIO.json VARIANT OUT [--keep]}. Exit codes as the simulator's:
 * 0 done, 2 a scenario or variant the oracle cannot carry out (the message says why), 3 Kafka
 * failed to come up or the run broke.
 */
public final class Oracle {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> VARIANTS = Set.of("classic-eager", "classic-cooperative", "consumer", "share");
  /** Time the whole run may take beyond the scenario's duration (set-up, JVM starts, dump). */
  private static final long SETUP_BUDGET_SEC = 300;

  private final Path scenarioPath;
  private final JsonNode scenario;
  private final String variant;
  private final Path outDir;
  private final boolean keep;
  private final String classpath = System.getProperty("java.class.path");
  private final List<ObjectNode> trace = new ArrayList<>();
  private final List<Proc> procs = new ArrayList<>();
  private final Map<String, List<Proc>> incarnations = new TreeMap<>();
  private final Map<String, Integer> nextIncarnation = new TreeMap<>();
  private final Map<String, Proc> running = new TreeMap<>();
  private Cluster cluster;
  private Clock clock;
  private long originWallMs;
  private long runEndUs;
  private Producing producing;
  private Path tmp;

  private Oracle(Path scenarioPath, JsonNode scenario, String variant, Path outDir, boolean keep) {
    this.scenarioPath = scenarioPath;
    this.scenario = scenario;
    this.variant = variant;
    this.outDir = outDir;
    this.keep = keep;
  }

  public static void main(String[] args) {
    if (args.length < 3) {
      System.err.println("usage: oracle SCENARIO.json VARIANT OUT_DIR [--keep]");
      System.exit(2);
    }
    Path sp = Path.of(args[0]);
    JsonNode sc;
    try {
      sc = JSON.readTree(sp.toFile());
    } catch (IOException e) {
      System.err.println(sp + ": cannot read the scenario: " + e.getMessage());
      System.exit(2);
      return;
    }
    String variant = args[1];
    List<String> refusals = refusals(sp, sc, variant);
    if (!refusals.isEmpty()) {
      refusals.forEach(System.err::println);
      System.exit(2);
    }
    Oracle o = new Oracle(sp, sc, variant, Path.of(args[2]), args.length > 3 && args[3].equals("--keep"));
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep((sc.path("duration_ms").asLong(60000) / 1000 + SETUP_BUDGET_SEC) * 1000);
        System.err.println("kafka-oracle: the run exceeded its time budget; killing every process");
        o.killAll();
        Runtime.getRuntime().halt(3);
      } catch (InterruptedException e) {
        // finished in time
      }
    }, "oracle-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    Runtime.getRuntime().addShutdownHook(new Thread(o::killAll));
    int rc;
    try {
      rc = o.run();
    } catch (Exception e) {
      System.err.println("kafka-oracle: " + e);
      e.printStackTrace();
      rc = 3;
    }
    o.killAll();
    o.cleanUp();
    System.exit(rc);
  }

  /** What the oracle cannot do on real processes, one clear line each (exit code 2). */
  static List<String> refusals(Path file, JsonNode sc, String variant) {
    List<String> r = new ArrayList<>();
    if (!VARIANTS.contains(variant)) {
      r.add(file + ": variant \"" + variant + "\": the oracle runs classic-eager, classic-cooperative, consumer and share");
    }
    int brokers = sc.path("cluster").path("brokers").asInt(1);
    if (brokers > 3) {
      r.add(file + ": /cluster/brokers: the oracle starts at most 3 real brokers, got " + brokers);
    }
    JsonNode net = sc.path("network");
    if (net.path("drop_rate").asDouble(0) > 0) {
      r.add(file + ": /network/drop_rate: message loss cannot be carried out on loopback; the oracle has no network fault injection");
    }
    JsonNode ev = sc.path("events");
    for (int i = 0; i < ev.size(); i++) {
      String d = ev.get(i).path("do").asText();
      switch (d) {
        case "network":
        case "partition-network":
          r.add(file + ": /events/" + i + "/do: \"" + d + "\" cannot be carried out on real Kafka: the oracle has no network fault injection (loopback only)");
          break;
        case "subscribe": case "fail-coordinator":
          if (variant.equals("share")) {
            r.add(file + ": /events/" + i + "/do: \"" + d + "\" is not carried out for share groups by the oracle (only start, stop, crash, restart, stall, pause, add-partitions, produce)");
          }
          break;
        case "start": case "stop": case "crash": case "restart": case "stall": case "pause":
        case "add-partitions": case "produce":
          break;
        case "stop-broker": case "crash-broker": case "start-broker": case "restart-broker": {
          int b = ev.get(i).path("broker").asInt(-1);
          if (b < 0 || b >= brokers) {
            r.add(file + ": /events/" + i + "/broker: the oracle's brokers are 0.." + (brokers - 1) + ", got " + ev.get(i).path("broker"));
          }
          break;
        }
        default:
          r.add(file + ": /events/" + i + "/do: \"" + d + "\" is not supported by the oracle");
      }
    }
    return r;
  }

  static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  // -------------------------------------------------------------------------------------------

  private int run() throws Exception {
    long wallStart = System.currentTimeMillis();
    tmp = Files.createTempDirectory("kafka-oracle-");
    long duration = scenario.path("duration_ms").asLong(60000);
    long lifetime = duration / 1000 + SETUP_BUDGET_SEC;
    int brokers = scenario.path("cluster").path("brokers").asInt(1);
    Map<String, String> brokerConfig = new TreeMap<>();
    scenario.path("cluster").path("config").fields()
        .forEachRemaining(e -> brokerConfig.put(e.getKey(), propertyValue(e.getValue())));
    log("starting " + brokers + " broker(s) in " + tmp);
    cluster = new Cluster(brokers, brokerConfig, tmp, classpath, lifetime);
    // Share groups (KIP-932) need the share.version feature at level 1 or above; set it at format
    // time rather than rely on the release's default level.
    if (variant.equals("share")) cluster.features.add("share.version=1");
    cluster.formatAndStart();
    // The consumer JVMs start (and build their KafkaConsumer) while the brokers come up.
    spawnConsumers(lifetime);
    try (Admin admin = cluster.admin()) {
      waitForBrokers(admin, brokers);
      createTopics(admin);
      warmOffsetsTopic(admin);
      if (variant.equals("share")) warmShareState(admin);
    }
    producing = new Producing(cluster.bootstrap(), scenario.path("topics"));
    producing.initialRecords();
    if (brokers > 1) warmReplication();
    for (Proc p : procs) p.awaitReady();
    log("all consumer JVMs ready; the scenario starts");

    clock = new Clock(System.nanoTime());
    originWallMs = System.currentTimeMillis();
    emit("run.start", obj().put("scenario", scenario.path("name").asText()).put("protocol", variant));
    producing.start(clock);
    Map<String, String> topicNames = new TreeMap<>();
    try (Admin admin = cluster.admin()) {
      script(admin, duration);
      clock.sleepUntilUs(duration * 1000);
      List<String> names = new ArrayList<>();
      scenario.path("topics").forEach(t -> names.add(t.path("name").asText()));
      try {
        admin.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS)
            .forEach((n, d) -> topicNames.put(d.topicId().toString(), n));
      } catch (Exception e) {
        log("could not map topic ids to names: " + e);
      }
    }
    // the simulator's world ends at duration_ms: what the real one did in the moments the
    // orchestrator took to get here (a SIGCONT at the very end, its rejoin) is beyond it
    long endUs = Math.min(clock.nowUs(), duration * 1000);
    for (Proc p : procs) p.kill();
    producing.close();
    for (Proc p : procs) p.drain();
    // run.end is written last, at the end of the run (write()): a trace without it was cut short.
    runEndUs = endUs;
    trace.removeIf(o -> o.path("t_us").asLong() > endUs);
    OffsetsDump dump = new OffsetsDump(cluster, scenario, clock, originWallMs, classpath, tmp);
    dump.copyTo = outDir.resolve(variant);
    List<ObjectNode> records = dump.records(trace, topicNames);
    records.removeIf(o -> o.path("t_us").asLong() > endUs);
    trace.addAll(records);
    cluster.close();
    write(wallStart);
    if (Cluster.requestLog()) {
      for (int b = 0; b < cluster.size; b++) {
        Path f = cluster.requestLogFile(b);
        if (Files.exists(f)) {
          Files.copy(f, outDir.resolve(variant).resolve(f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    if (ClientLog.enabled()) ClientLog.keep(tmp, outDir.resolve(variant), clock.nanosAt(0));
    return 0;
  }

  private void waitForBrokers(Admin admin, int n) throws Exception {
    long deadline = System.currentTimeMillis() + 180_000;
    while (true) {
      try {
        var nodes = admin.describeCluster().nodes().get(10, TimeUnit.SECONDS);
        if (nodes.size() >= n) return;
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        // not up yet
      }
      for (int i = 0; i < n; i++) {
        if (!cluster.alive(i)) {
          throw new IllegalStateException("broker-" + i + " exited: " + Cluster.tail(tmp.resolve("broker-" + i + ".log")));
        }
      }
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("brokers did not come up in 180 s");
      Thread.sleep(200);
    }
  }

  private void createTopics(Admin admin) throws Exception {
    List<NewTopic> topics = new ArrayList<>();
    short rf = (short) Math.min(3, cluster.size);
    for (JsonNode t : scenario.path("topics")) {
      topics.add(new NewTopic(t.path("name").asText(), t.path("partitions").asInt(), rf));
    }
    if (!topics.isEmpty()) admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
  }

  /** Name of the topic that warms a multi-broker cluster's replication before time 0. */
  static final String WARM_UP_TOPIC = "kafka-oracle-warm-up-replication";

  /**
   * With several brokers, every write waits for the followers (finding 22); brokers that start
   * compiling their produce and replica-fetch paths at time 0 made the scenario's first seconds
   * the slowest of the run (finding 30). Records to a topic of the oracle's own, one partition
   * per broker with the scenario's replication factor, for 8 s before time 0. No group reads
   * it; its partitions stay in the followers' fetch sessions, idle (an incremental Fetch names
   * only partitions that changed).
   */
  private void warmReplication() throws Exception {
    try (Admin admin = cluster.admin()) {
      short rf = (short) Math.min(3, cluster.size);
      admin.createTopics(List.of(new NewTopic(WARM_UP_TOPIC, cluster.size, rf))).all().get(60, TimeUnit.SECONDS);
    }
    producing.warmUp(WARM_UP_TOPIC, cluster.size, 8000);
  }

  /** The simulator's world has __consumer_offsets at time 0: create it before the scenario starts. */
  private void warmOffsetsTopic(Admin admin) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (true) {
      try {
        admin.listConsumerGroupOffsets("kafka-oracle-warm-up").partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS);
        return;
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("__consumer_offsets was not created: " + e);
        Thread.sleep(200);
      }
    }
  }

  /**
   * The simulator's world has __share_group_state at time 0, and a share coordinator that has
   * initialized a share-partition before: a throw-away share group joins, polls the first topic
   * until Kafka has created __share_group_state, and 2 s more (its partitions' initialization).
   * Without it the scenario's first share-partition waited seconds for the topic's creation on
   * the recording machine. Its records live under another group id, which compare ignores.
   */
  private void warmShareState(Admin admin) throws Exception {
    java.util.Properties p = new java.util.Properties();
    p.put("bootstrap.servers", cluster.bootstrap());
    p.put("group.id", "kafka-oracle-warm-up-share");
    p.put("client.id", "kafka-oracle-warm-up-share");
    p.put("key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
    String topic = scenario.path("topics").path(0).path("name").asText();
    long deadline = System.currentTimeMillis() + 120_000;
    long doneAt = Long.MAX_VALUE;
    try (org.apache.kafka.clients.consumer.KafkaShareConsumer<byte[], byte[]> c =
        new org.apache.kafka.clients.consumer.KafkaShareConsumer<>(p)) {
      c.subscribe(List.of(topic));
      while (System.currentTimeMillis() < Math.min(deadline, doneAt)) {
        c.poll(java.time.Duration.ofMillis(200));
        if (doneAt == Long.MAX_VALUE && admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
            .names().get(10, TimeUnit.SECONDS).contains("__share_group_state")) {
          doneAt = System.currentTimeMillis() + 2_000;
        }
      }
    }
    if (doneAt == Long.MAX_VALUE) log("__share_group_state was not created in 120 s; the run goes on");
  }

  // -------------------------------------------------------------------------------------------
  // consumers

  private void spawnConsumers(long lifetime) throws Exception {
    Map<String, Integer> starts = new TreeMap<>();
    Map<String, JsonNode> startConfigs = new LinkedHashMap<>();
    for (JsonNode e : scenario.path("events")) {
      String d = e.path("do").asText();
      if (d.equals("start") || d.equals("restart")) {
        String c = e.path("consumer").asText();
        int k = starts.merge(c, 1, Integer::sum);
        startConfigs.put(c + "#" + (k - 1), e.get("config"));
      }
    }
    for (JsonNode c : scenario.path("consumers")) {
      String name = c.path("name").asText();
      int n = starts.getOrDefault(name, 0);
      List<Proc> l = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        Proc p = new Proc(name, k, consumerSpec(c, startConfigs.get(name + "#" + k)), lifetime);
        l.add(p);
        procs.add(p);
      }
      incarnations.put(name, l);
      nextIncarnation.put(name, 0);
    }
  }

  private ObjectNode consumerSpec(JsonNode c, JsonNode eventConfig) {
    if (variant.equals("share")) return shareConsumerSpec(c, eventConfig);
    ObjectNode s = obj();
    s.put("name", c.path("name").asText());
    s.put("seed", scenario.path("seed").asLong(1));
    s.set("topics", c.path("topics"));
    s.put("poll_timeout_ms", c.path("poll_timeout_ms").asLong(100));
    if (c.has("processing")) s.set("processing", c.get("processing"));
    if (c.has("callbacks")) s.set("callbacks", c.get("callbacks"));
    String commit = c.path("commit").asText("auto");
    s.put("commit", commit);
    Map<String, String> cfg = new TreeMap<>();
    boolean classic = variant.startsWith("classic");
    cfg.put("group.protocol", classic ? "classic" : "consumer");
    if (!commit.equals("auto")) cfg.put("enable.auto.commit", "false");
    c.path("config").fields().forEachRemaining(e -> cfg.put(e.getKey(), propertyValue(e.getValue())));
    JsonNode byProtocol = c.path("config_by_protocol").path(classic ? "classic" : "consumer");
    byProtocol.fields().forEachRemaining(e -> cfg.put(e.getKey(), propertyValue(e.getValue())));
    if (eventConfig != null) eventConfig.fields().forEachRemaining(e -> cfg.put(e.getKey(), propertyValue(e.getValue())));
    // The variant's default assignor, for a classic member only: an incarnation restarted with
    // group.protocol=consumer (a migration) may not set it (KafkaConsumer refuses the config).
    if (!cfg.containsKey("partition.assignment.strategy") && "classic".equals(cfg.get("group.protocol"))) {
      if (variant.equals("classic-eager")) {
        cfg.put("partition.assignment.strategy",
            "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
      } else if (variant.equals("classic-cooperative")) {
        cfg.put("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
      }
    }
    if (cfg.containsKey("partition.assignment.strategy")) {
      cfg.put("partition.assignment.strategy", assignorClasses(cfg.get("partition.assignment.strategy")));
    }
    cfg.put("group.id", c.path("group").asText());
    cfg.put("bootstrap.servers", cluster.bootstrap());
    ObjectNode config = s.putObject("config");
    cfg.forEach(config::put);
    return s;
  }

  /** A KafkaShareConsumer's spec: no group.protocol, assignor or commit settings (KIP-932). */
  private ObjectNode shareConsumerSpec(JsonNode c, JsonNode eventConfig) {
    ObjectNode s = obj();
    s.put("name", c.path("name").asText());
    s.put("seed", scenario.path("seed").asLong(1));
    s.set("topics", c.path("topics"));
    s.put("poll_timeout_ms", c.path("poll_timeout_ms").asLong(100));
    if (c.has("processing")) s.set("processing", c.get("processing"));
    if (c.has("outcomes")) s.set("outcomes", c.get("outcomes"));
    s.put("delivery_count_limit", scenario.path("cluster").path("config").path("group.share.delivery.count.limit").asInt(5));
    Map<String, String> cfg = new TreeMap<>();
    c.path("config").fields().forEachRemaining(e -> cfg.put(e.getKey(), propertyValue(e.getValue())));
    c.path("config_by_protocol").path("share").fields().forEachRemaining(e -> cfg.put(e.getKey(), propertyValue(e.getValue())));
    if (eventConfig != null) eventConfig.fields().forEachRemaining(e -> cfg.put(e.getKey(), propertyValue(e.getValue())));
    cfg.put("group.id", c.path("group").asText());
    cfg.put("bootstrap.servers", cluster.bootstrap());
    ObjectNode config = s.putObject("config");
    cfg.forEach(config::put);
    return s;
  }

  static String assignorClasses(String list) {
    List<String> out = new ArrayList<>();
    for (String a : list.split(",")) {
      String t = a.trim();
      switch (t) {
        case "range": out.add("org.apache.kafka.clients.consumer.RangeAssignor"); break;
        case "roundrobin": out.add("org.apache.kafka.clients.consumer.RoundRobinAssignor"); break;
        case "sticky": out.add("org.apache.kafka.clients.consumer.StickyAssignor"); break;
        case "cooperative-sticky": out.add("org.apache.kafka.clients.consumer.CooperativeStickyAssignor"); break;
        default: out.add(t);
      }
    }
    return String.join(",", out);
  }

  static String propertyValue(JsonNode v) {
    if (v.isArray()) {
      List<String> l = new ArrayList<>();
      v.forEach(x -> l.add(x.asText()));
      return String.join(",", l);
    }
    return v.asText();
  }

  /** One consumer incarnation's JVM. */
  final class Proc {
    final String name;
    final int incarnation;
    final Process process;
    final PrintWriter stdin;
    private final Thread reader;
    private volatile boolean ready;

    Proc(String name, int incarnation, ObjectNode spec, long lifetime) throws IOException {
      this.name = name;
      this.incarnation = incarnation;
      Path specFile = tmp.resolve("consumer-" + name + "-" + incarnation + ".json");
      Files.writeString(specFile, spec.toString());
      List<String> cmd = new ArrayList<>(List.of("timeout", "-s", "KILL", Long.toString(lifetime), javaBin(),
          "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath));
      if (ClientLog.enabled()) cmd.add(ClientLog.jvmOption(tmp, name, incarnation));
      cmd.add((variant.equals("share") ? ShareConsumerApp.class : ConsumerApp.class).getName());
      cmd.add(specFile.toString());
      ProcessBuilder pb = new ProcessBuilder(cmd);
      pb.redirectError(tmp.resolve("consumer-" + name + "-" + incarnation + ".log").toFile());
      process = pb.start();
      stdin = new PrintWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8), true);
      reader = new Thread(this::read, "oracle-read-" + name + "-" + incarnation);
      reader.start();
    }

    private void read() {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          JsonNode n;
          try {
            n = JSON.readTree(line);
          } catch (IOException e) {
            continue;
          }
          if (n.has("ready")) {
            synchronized (this) {
              ready = true;
              notifyAll();
            }
            continue;
          }
          if (n.isObject()) {
            ObjectNode o = (ObjectNode) n;
            if (incarnation > 0) o.put("incarnation", incarnation);
            synchronized (trace) {
              trace.add(o);
            }
          }
        }
      } catch (IOException e) {
        // process gone
      }
    }

    synchronized void awaitReady() throws InterruptedException {
      long deadline = System.currentTimeMillis() + 240_000;
      while (!ready) {
        if (!process.isAlive()) throw new IllegalStateException("consumer JVM " + name + " exited before it was ready; see its log in " + tmp);
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("consumer JVM " + name + " not ready in 240 s");
        wait(200);
      }
    }

    /** The java process itself (the child of coreutils timeout), for signals. */
    long javaPid() {
      return process.descendants().map(ProcessHandle::pid).findFirst().orElse(process.pid());
    }

    void send(String line) {
      stdin.println(line);
    }

    void signal(String sig) throws IOException, InterruptedException {
      new ProcessBuilder("kill", "-" + sig, Long.toString(javaPid())).inheritIO().start().waitFor();
    }

    void kill() {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      running.remove(name, this);
    }

    void drain() throws InterruptedException {
      reader.join(10_000);
    }
  }

  // -------------------------------------------------------------------------------------------
  // the script

  private record Action(long atUs, int order, Runnable run) {}

  private int order;

  private void script(Admin admin, long duration) {
    PriorityQueue<Action> q = new PriorityQueue<>(Comparator.comparingLong(Action::atUs).thenComparingInt(Action::order));
    for (JsonNode e : scenario.path("events")) {
      long at = e.path("at_ms").asLong() * 1000;
      q.add(new Action(at, order++, () -> perform(e, q, admin)));
    }
    while (!q.isEmpty()) {
      Action a = q.poll();
      if (a.atUs > duration * 1000) break;
      clock.sleepUntilUs(a.atUs);
      try {
        a.run.run();
      } catch (RuntimeException ex) {
        log("event at " + a.atUs / 1000 + " ms failed: " + ex);
        emit("oracle.error", obj().put("message", String.valueOf(ex)));
      }
    }
  }

  private void perform(JsonNode e, PriorityQueue<Action> q, Admin admin) {
    String d = e.path("do").asText();
    String c = e.path("consumer").asText();
    long at = e.path("at_ms").asLong() * 1000;
    try {
      switch (d) {
        case "start":
          startNext(c);
          break;
        case "stop": {
          Proc p = running.get(c);
          if (p != null) {
            p.send("stop");
            running.remove(c);
          }
          break;
        }
        case "crash":
          crash(c);
          break;
        case "restart": {
          boolean graceful = e.path("graceful").asBoolean(true);
          Proc p = running.get(c);
          if (p != null) {
            if (graceful) {
              p.send("stop");
              running.remove(c);
            } else {
              crash(c);
            }
          }
          q.add(new Action(at + e.path("after_ms").asLong() * 1000, order++, () -> startNext(c)));
          break;
        }
        case "stall": {
          Proc p = running.get(c);
          if (p != null) p.send("stall " + (at + e.path("for_ms").asLong() * 1000));
          break;
        }
        case "pause": {
          Proc p = running.get(c);
          if (p == null) break;
          p.signal("STOP");
          emit("consumer.pause", obj().put("consumer", c).put("for_ms", e.path("for_ms").asLong()));
          q.add(new Action(at + e.path("for_ms").asLong() * 1000, order++, () -> {
            try {
              p.signal("CONT");
            } catch (IOException | InterruptedException ex) {
              throw new IllegalStateException(ex);
            }
            emit("consumer.resume", obj().put("consumer", c));
          }));
          break;
        }
        case "subscribe": {
          Proc p = running.get(c);
          List<String> topics = new ArrayList<>();
          e.path("topics").forEach(t -> topics.add(t.asText()));
          if (p != null) p.send("subscribe " + String.join(",", topics));
          break;
        }
        case "add-partitions": {
          String topic = e.path("topic").asText();
          int n = e.path("partitions").asInt();
          admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(n))).all().get(30, TimeUnit.SECONDS);
          emit("topic.partitions", obj().put("topic", topic).put("partitions", n));
          producing.partitionsChanged(topic, n);
          break;
        }
        case "produce": {
          producing.change(e.path("topic").asText(), e);
          ObjectNode f = obj().put("topic", e.path("topic").asText());
          if (e.has("records_per_sec")) f.set("records_per_sec", e.get("records_per_sec"));
          if (e.has("gap_ms")) f.set("gap_ms", e.get("gap_ms"));
          emit("produce", f);
          break;
        }
        case "fail-coordinator":
          failCoordinator(e, q, admin, at);
          break;
        case "stop-broker":
          stopBroker(e.path("broker").asInt(), q, -1);
          break;
        case "crash-broker":
          crashBroker(e.path("broker").asInt());
          break;
        case "start-broker":
          startBroker(e.path("broker").asInt());
          break;
        case "restart-broker": {
          int b = e.path("broker").asInt();
          long after = e.path("after_ms").asLong() * 1000;
          if (e.path("graceful").asBoolean(true)) {
            stopBroker(b, q, after);
          } else {
            crashBroker(b);
            q.add(new Action(at + after, order++, () -> startBroker(b)));
          }
          break;
        }
        default:
          break;
      }
    } catch (Exception ex) {
      throw new IllegalStateException(d + ": " + ex, ex);
    }
  }

  private void startNext(String c) {
    int k = nextIncarnation.get(c);
    List<Proc> l = incarnations.get(c);
    if (k >= l.size()) throw new IllegalStateException("no JVM left for " + c);
    nextIncarnation.put(c, k + 1);
    Proc p = l.get(k);
    running.put(c, p);
    p.send("start " + clock.nanosAt(0));
  }

  private void crash(String c) {
    Proc p = running.get(c);
    if (p == null) return;
    p.kill();
    emit("consumer.crash", obj().put("consumer", c));
  }

  private void failCoordinator(JsonNode e, PriorityQueue<Action> q, Admin admin, long at) throws Exception {
    String group = e.path("group").asText();
    Node coordinator = admin.describeConsumerGroups(List.of(group)).all().get(20, TimeUnit.SECONDS)
        .get(group).coordinator();
    int b = coordinator.id();
    cluster.kill(b);
    int p = OffsetsDump.partitionFor(group, OffsetsDump.numPartitions(scenario));
    emit("broker.fail", obj().put("group", group).put("broker", b).put("partition", p));
    if (e.has("down_ms")) {
      q.add(new Action(at + e.path("down_ms").asLong() * 1000, order++, () -> {
        try {
          cluster.start(b);
        } catch (IOException ex) {
          throw new IllegalStateException(ex);
        }
        emit("broker.recover", obj().put("broker", b));
      }));
    }
  }

  /** A controlled shutdown (SIGTERM: the broker moves its leaderships away, then exits). With
   *  startAfterUs >= 0 the broker starts again that long after its process has exited, as the
   *  simulator's restart-broker does; the exit is watched from the script's own loop. */
  private void stopBroker(int b, PriorityQueue<Action> q, long startAfterUs) {
    if (!cluster.alive(b)) return;
    cluster.terminate(b);
    emit("broker.stop", obj().put("broker", b).put("graceful", true));
    if (startAfterUs >= 0) q.add(new Action(clock.nowUs() + 10_000, order++, () -> startWhenExited(b, q, startAfterUs)));
  }

  private void startWhenExited(int b, PriorityQueue<Action> q, long afterUs) {
    if (cluster.alive(b)) {
      q.add(new Action(clock.nowUs() + 10_000, order++, () -> startWhenExited(b, q, afterUs)));
      return;
    }
    log("broker-" + b + " exited by " + clock.nowUs() / 1000 + " ms; it starts again " + afterUs / 1000 + " ms later");
    q.add(new Action(clock.nowUs() + afterUs, order++, () -> startBroker(b)));
  }

  private void crashBroker(int b) {
    if (!cluster.alive(b)) return;
    try {
      cluster.kill(b);
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(ex);
    }
    emit("broker.crash", obj().put("broker", b));
  }

  private void startBroker(int b) {
    if (cluster.alive(b)) return;
    try {
      cluster.start(b);
    } catch (IOException ex) {
      throw new IllegalStateException(ex);
    }
    emit("broker.start", obj().put("broker", b));
  }

  // -------------------------------------------------------------------------------------------

  private void emit(String type, ObjectNode fields) {
    ObjectNode o = obj();
    o.put("t_us", clock.nowUs());
    o.put("type", type);
    o.setAll(fields);
    synchronized (trace) {
      trace.add(o);
    }
  }

  static ObjectNode obj() {
    return JSON.createObjectNode();
  }

  private void write(long wallStart) throws Exception {
    Path dir = outDir.resolve(variant);
    Files.createDirectories(dir);
    List<ObjectNode> sorted;
    synchronized (trace) {
      sorted = new ArrayList<>(trace);
    }
    sorted.sort(Comparator.comparingLong(o -> o.path("t_us").asLong()));
    Path t = dir.resolve("trace.jsonl.tmp");
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(t, StandardCharsets.UTF_8))) {
      for (ObjectNode o : sorted) w.println(o.toString());
      long last = sorted.isEmpty() ? runEndUs : Math.max(runEndUs, sorted.get(sorted.size() - 1).path("t_us").asLong());
      ObjectNode end = obj();
      end.put("t_us", last);
      end.put("type", "run.end");
      w.println(end.toString());
    }
    Files.move(t, dir.resolve("trace.jsonl"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    ObjectNode m = obj();
    m.put("kafka_version", AppInfoParser.getVersion());
    m.put("kafka_commit", AppInfoParser.getCommitId());
    m.put("java_version", System.getProperty("java.version"));
    m.put("java_vendor", System.getProperty("java.vendor"));
    m.put("java_vm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
    m.put("cpus", Runtime.getRuntime().availableProcessors());
    m.put("load_average", loadAverage());
    m.put("date", Instant.ofEpochMilli(originWallMs).toString());
    m.put("scenario", scenario.path("name").asText());
    m.put("scenario_file", scenarioPath.toString());
    m.put("scenario_sha256", sha256(scenarioPath));
    m.put("variant", variant);
    m.put("brokers", cluster.size);
    m.put("wall_ms", System.currentTimeMillis() - wallStart);
    m.put("clock", "System.nanoTime (CLOCK_MONOTONIC) from the scenario's start; __consumer_offsets records timed by their CreateTime (ms)");
    Files.writeString(dir.resolve("meta.json"), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(m) + "\n");
    log("wrote " + dir.resolve("trace.jsonl") + " (" + sorted.size() + " events)");
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "";
    }
  }

  static String sha256(Path p) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    return HexFormat.of().formatHex(md.digest(Files.readAllBytes(p)));
  }

  synchronized void killAll() {
    for (Proc p : procs) {
      p.process.descendants().forEach(ProcessHandle::destroyForcibly);
      p.process.destroyForcibly();
    }
    if (producing != null) producing.close();
    if (cluster != null) cluster.close();
  }

  private void cleanUp() {
    if (tmp == null || keep) {
      if (tmp != null) log("kept " + tmp);
      return;
    }
    try (Stream<Path> s = Files.walk(tmp)) {
      s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    } catch (IOException e) {
      log("could not remove " + tmp + ": " + e);
    }
  }

  static void log(String s) {
    System.err.println("kafka-oracle: " + s);
  }

}
