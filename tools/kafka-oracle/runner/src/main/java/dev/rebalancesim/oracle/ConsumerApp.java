package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

/**
 * One scenario consumer in its own JVM: the real KafkaConsumer in the application's poll loop.
 *
 * <p>Started by {@link Oracle} ahead of its start time (so that JVM start-up is not part of the
 * scenario), it waits for commands on stdin: {@code start ORIGIN_NANOS}, {@code stop},
 * {@code stall FOR_MS}, {@code subscribe T1,T2}. It writes trace events as JSON lines on stdout,
 * timed by the shared monotonic clock.
 */
public final class ConsumerApp extends ConsumerProcess {
  private final Random random;
  private final Dist perRecord, perBatch, perPoll, revokeMs, assignMs, lostMs;
  private final String commit;
  private final long pollTimeoutMs;
  private volatile KafkaConsumer<byte[], byte[]> consumer;
  private List<String> owned = new ArrayList<>();
  private String memberId = "";
  private int generation = Integer.MIN_VALUE;

  private ConsumerApp(JsonNode spec) {
    super(spec);
    this.random = new Random(spec.path("seed").asLong(1) * 7919 + name.hashCode());
    JsonNode p = spec.path("processing");
    perRecord = Dist.of(p.get("per_record_ms"));
    perBatch = Dist.of(p.get("per_batch_ms"));
    perPoll = Dist.of(p.get("per_poll_ms"));
    JsonNode c = spec.path("callbacks");
    revokeMs = Dist.of(c.get("revoke_ms"));
    assignMs = Dist.of(c.get("assign_ms"));
    lostMs = Dist.of(c.get("lost_ms"));
    commit = spec.path("commit").asText("auto");
    pollTimeoutMs = spec.path("poll_timeout_ms").asLong(100);
  }

  public static void main(String[] args) throws Exception {
    JsonNode spec = JSON.readTree(new File(args[0]));
    // Load the client's classes while waiting, so that start is not class loading.
    Class.forName("org.apache.kafka.clients.consumer.KafkaConsumer");
    Class.forName("org.apache.kafka.clients.consumer.internals.ClassicKafkaConsumer");
    Class.forName("org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer");
    new ConsumerApp(spec).run();
  }

  @Override
  protected void wakeup() {
    if (consumer != null) consumer.wakeup();
  }

  private void run() throws Exception {
    startCommandReader();
    // The KafkaConsumer is built before the scenario's start time: on a loaded machine its
    // construction takes seconds, and nothing of it reaches the group until subscribe() and poll().
    Properties props = clientProperties();
    consumer = new KafkaConsumer<>(props);
    warmUp(props);
    awaitStart();
    emit("consumer.start", null);
    subscribe(topicsOf(spec.path("topics")));
    // The harness's own start latency ends here: subscribe() has returned and the first poll()
    // follows (docs/fidelity.md, finding 24).
    emit("consumer.subscribed", null);
    try {
      loop();
    } finally {
      flushPolls();
      try {
        consumer.close();
      } catch (RuntimeException e) {
        emitError("close", e);
      }
      emitAssignmentIfChanged();
      emit("consumer.closed", null);
      OUT.flush();
      System.exit(0);
    }
  }

  /**
   * Loads and compiles the client's fetch and network paths before the start, with a second
   * consumer of no group (so it commits nothing and joins nothing): polls partition 0 of the first
   * topic until the broker answers, for at most 60 s, then a few polls more.
   */
  private void warmUp(Properties props) {
    List<String> topics = topicsOf(spec.path("topics"));
    if (topics.isEmpty()) return;
    Properties w = new Properties();
    w.putAll(props);
    w.remove("group.id");
    w.remove("group.instance.id");
    w.remove("client.id");
    w.put("client.id", "kafka-oracle-warm-up-" + name);
    w.put("enable.auto.commit", "false");
    w.put("group.protocol", props.getProperty("group.protocol", "classic"));
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(w)) {
      TopicPartition tp = new TopicPartition(topics.get(0), 0);
      c.assign(List.of(tp));
      long deadline = System.nanoTime() + 60_000_000_000L;
      int after = 0;
      while (System.nanoTime() < deadline && after < 10) {
        c.poll(Duration.ofMillis(100));
        try {
          c.position(tp, Duration.ofMillis(200));
          after++;
        } catch (RuntimeException e) {
          // not up yet
        }
      }
    } catch (RuntimeException e) {
      // warm-up is best effort
    }
    warmUpGroup(props, topics);
  }

  /**
   * Loads and compiles the group paths, in this JVM and in the broker's group coordinator, before
   * the start: a third consumer joins a throw-away group of its own (the scenario's protocol and
   * assignor, no commits) until it has its assignment, then closes. Without it the first member
   * to reach the coordinator paid 0.4-0.6 s of class loading and JIT on the recording machine,
   * which the simulator does not model (docs/fidelity.md, finding 1). The throw-away group's
   * records live under another group id, which the comparison ignores.
   */
  private void warmUpGroup(Properties props, List<String> topics) {
    Properties w = new Properties();
    w.putAll(props);
    w.remove("group.instance.id");
    w.remove("client.id");
    w.put("client.id", "kafka-oracle-warm-up-group-" + name);
    w.put("group.id", "kafka-oracle-warm-up-" + name);
    w.put("enable.auto.commit", "false");
    w.put("group.protocol", props.getProperty("group.protocol", "classic"));
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(w)) {
      c.subscribe(topics);
      long deadline = System.nanoTime() + 60_000_000_000L;
      int after = 0;
      while (System.nanoTime() < deadline && after < 5) {
        c.poll(Duration.ofMillis(100));
        if (!c.assignment().isEmpty()) after++;
      }
    } catch (RuntimeException e) {
      // warm-up is best effort
    }
  }

  private void loop() {
    while (!stopping) {
      for (String[] cmd; (cmd = commands.poll()) != null; ) handle(cmd);
      if (stopping) break;
      ConsumerRecords<byte[], byte[]> records;
      try {
        records = consumer.poll(Duration.ofMillis(pollTimeoutMs));
      } catch (WakeupException e) {
        if (stopping) break;
        continue;
      } catch (RuntimeException e) {
        flushPolls();
        emitError("poll", e);
        continue;
      }
      noteMember();
      int n = records.count();
      if (n == 0) {
        emptyPoll();
      } else {
        flushPolls();
        emitFetched(records);
        double ms = perBatch.sample(random);
        for (int i = 0; i < n; i++) ms += perRecord.sample(random);
        Clock.sleepMs(ms);
        if (!commit.equals("auto")) commitProcessed();
      }
      Clock.sleepMs(perPoll.sample(random));
    }
  }

  private void handle(String[] cmd) {
    switch (cmd[0]) {
      case "stall": {
        flushPolls();
        long until = Long.parseLong(cmd[1]);
        clock.sleepUntilUs(until);
        emit("consumer.resume", null);
        break;
      }
      case "subscribe": {
        flushPolls();
        List<String> topics = cmd.length > 1 && !cmd[1].isEmpty() ? List.of(cmd[1].split(",")) : List.of();
        ObjectNode f = JSON.createObjectNode();
        ArrayNode a = f.putArray("topics");
        topics.forEach(a::add);
        emit("consumer.subscribe", f);
        subscribe(topics);
        break;
      }
      default:
        break;
    }
  }

  private void subscribe(List<String> topics) {
    if (topics.isEmpty()) {
      consumer.unsubscribe();
      return;
    }
    consumer.subscribe(topics, new ConsumerRebalanceListener() {
      @Override
      public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        callback("onPartitionsRevoked", partitions, revokeMs);
      }

      @Override
      public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        callback("onPartitionsAssigned", partitions, assignMs);
      }

      @Override
      public void onPartitionsLost(Collection<TopicPartition> partitions) {
        callback("onPartitionsLost", partitions, lostMs);
      }
    });
  }

  private void callback(String kind, Collection<TopicPartition> partitions, Dist d) {
    flushPolls();
    noteMember();
    ObjectNode f = JSON.createObjectNode();
    f.put("callback", kind);
    ArrayNode a = f.putArray("partitions");
    sorted(partitions).forEach(a::add);
    f.put("phase", "start");
    emit("callback", f);
    Clock.sleepMs(d.sample(random));
    f.put("phase", "end");
    emit("callback", f);
    emitAssignmentIfChanged();
  }

  private void commitProcessed() {
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    for (TopicPartition tp : consumer.assignment()) {
      offsets.put(tp, new OffsetAndMetadata(consumer.position(tp, Duration.ofSeconds(5))));
    }
    String purpose = commit.equals("sync") ? "commitSync" : "commitAsync";
    ObjectNode f = JSON.createObjectNode();
    f.put("phase", "sent");
    f.put("purpose", purpose);
    f.put("generation", consumer.groupMetadata().generationId());
    ObjectNode o = f.putObject("offsets");
    offsets.entrySet().stream()
        .sorted(Comparator.comparing(e -> e.getKey().toString(), Comparator.comparing(ConsumerApp::tpKey)))
        .forEach(e -> o.put(e.getKey().toString(), e.getValue().offset()));
    emit("commit", f);
    if (commit.equals("sync")) {
      String error = "NONE";
      try {
        consumer.commitSync(offsets);
      } catch (WakeupException e) {
        throw e;
      } catch (RuntimeException e) {
        error = e.getClass().getSimpleName();
      }
      commitDone(purpose, error);
    } else {
      consumer.commitAsync(offsets, (m, e) -> commitDone(purpose, e == null ? "NONE" : e.getClass().getSimpleName()));
    }
  }

  private void commitDone(String purpose, String error) {
    ObjectNode f = JSON.createObjectNode();
    f.put("phase", "completed");
    f.put("purpose", purpose);
    f.put("error", error);
    emit("commit", f);
  }

  private void emitFetched(ConsumerRecords<byte[], byte[]> records) {
    ObjectNode f = JSON.createObjectNode();
    f.put("count", records.count());
    ArrayNode ranges = f.putArray("ranges");
    List<TopicPartition> parts = new ArrayList<>(records.partitions());
    parts.sort(Comparator.comparing(TopicPartition::toString, Comparator.comparing(ConsumerApp::tpKey)));
    for (TopicPartition tp : parts) {
      List<ConsumerRecord<byte[], byte[]>> rs = records.records(tp);
      ObjectNode r = ranges.addObject();
      r.put("partition", tp.toString());
      r.put("first_offset", rs.get(0).offset());
      r.put("last_offset", rs.get(rs.size() - 1).offset());
      r.put("count", rs.size());
    }
    emit("records.fetched", f);
  }

  /** A run of empty poll() returns is one line: how many, from when to when. */
  private void noteMember() {
    try {
      var m = consumer.groupMetadata();
      if (!m.memberId().equals(memberId) || m.generationId() != generation) {
        memberId = m.memberId();
        generation = m.generationId();
        ObjectNode f = JSON.createObjectNode();
        f.put("member_id", memberId);
        f.put("generation", generation);
        emit("member.id", f);
      }
    } catch (RuntimeException e) {
      // no group metadata yet
    }
    emitAssignmentIfChanged();
  }

  private void emitAssignmentIfChanged() {
    List<String> now;
    try {
      now = sorted(consumer.assignment());
    } catch (RuntimeException e) {
      return;
    }
    if (now.equals(owned)) return;
    owned = now;
    ObjectNode f = JSON.createObjectNode();
    ArrayNode a = f.putArray("owned");
    now.forEach(a::add);
    emit("assignment", f);
  }

  static List<String> topicsOf(JsonNode a) {
    List<String> l = new ArrayList<>();
    a.forEach(t -> l.add(t.asText()));
    return l;
  }

  static String tpKey(String tp) {
    int dash = tp.lastIndexOf('-');
    return String.format("%s-%08d", tp.substring(0, dash), Integer.parseInt(tp.substring(dash + 1)));
  }

  static List<String> sorted(Collection<TopicPartition> ps) {
    TreeSet<String> keys = new TreeSet<>(Comparator.comparing(ConsumerApp::tpKey));
    ps.forEach(p -> keys.add(p.toString()));
    return new ArrayList<>(keys);
  }
}
