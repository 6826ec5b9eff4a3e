package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;

/**
 * One scenario consumer of a share group (KIP-932) in its own JVM: the real KafkaShareConsumer in
 * the application's poll loop, the counterpart of {@link ConsumerApp} for the {@code share}
 * variant. Same commands on stdin ({@code start ORIGIN_NANOS}, {@code stop}, {@code stall
 * UNTIL_US}); crash and pause are signals from {@link Oracle}.
 *
 * <p>What it writes, in the simulator's vocabulary (docs/fidelity.md, "Share groups"): a
 * {@code share.records} line {@code AVAILABLE -> ACQUIRED} (cause {@code fetch}) for each run of
 * consecutive offsets of one partition and one delivery count that a poll() returned, then, when
 * the application acknowledges them, {@code ACQUIRED -> ACKNOWLEDGED} (ACCEPT), {@code -> ARCHIVED}
 * (REJECT, or RELEASE at the group's delivery count limit) or {@code -> AVAILABLE} (RELEASE), and a
 * {@code share.process} line per run with its accepted/released/rejected counts. Under
 * {@code share.acknowledgement.mode=implicit} the records of a poll are accepted by the next
 * poll(), and the ACCEPT lines carry that poll's time. Times are the client's: the broker applies
 * an acknowledgement with the next ShareFetch or ShareAcknowledge request.
 */
public final class ShareConsumerApp extends ConsumerProcess {
  private final String group;
  private final Random random;
  private final Dist perRecord, perBatch, perPoll;
  private final double reject, release;
  private final boolean explicit;
  private final int deliveryLimit;
  private final long pollTimeoutMs;
  private volatile KafkaShareConsumer<byte[], byte[]> consumer;
  private String clientId;
  /** Implicit mode: the runs of the last poll, accepted by the next poll() or close(). */
  private List<Run> unacknowledged = new ArrayList<>();

  /** Consecutive offsets of one partition delivered with one delivery count in one poll. */
  private record Run(String partition, long first, long last, int deliveryCount, List<ConsumerRecord<byte[], byte[]>> records) {}

  private ShareConsumerApp(JsonNode spec) {
    super(spec);
    this.group = spec.path("config").path("group.id").asText();
    this.random = new Random(spec.path("seed").asLong(1) * 7919 + name.hashCode());
    JsonNode p = spec.path("processing");
    perRecord = Dist.of(p.get("per_record_ms"));
    perBatch = Dist.of(p.get("per_batch_ms"));
    perPoll = Dist.of(p.get("per_poll_ms"));
    reject = spec.path("outcomes").path("reject").asDouble(0);
    release = spec.path("outcomes").path("release").asDouble(0);
    explicit = spec.path("config").path("share.acknowledgement.mode").asText("implicit").equals("explicit");
    deliveryLimit = spec.path("delivery_count_limit").asInt(5);
    pollTimeoutMs = spec.path("poll_timeout_ms").asLong(100);
  }

  public static void main(String[] args) throws Exception {
    JsonNode spec = JSON.readTree(new File(args[0]));
    Class.forName("org.apache.kafka.clients.consumer.KafkaShareConsumer");
    new ShareConsumerApp(spec).run();
  }

  @Override
  protected void wakeup() {
    if (consumer != null) consumer.wakeup();
  }

  private void run() throws Exception {
    startCommandReader();
    Properties props = clientProperties();
    // The group's records name the member by id only; its client.id (its ShareGroupMemberMetadata
    // record's) names the scenario's consumer there (OffsetsDecoder).
    props.putIfAbsent("client.id", "kafka-oracle-share-" + group + "-" + name);
    clientId = props.getProperty("client.id");
    consumer = new KafkaShareConsumer<>(props);
    awaitStart();
    ObjectNode started = JSON.createObjectNode();
    started.put("client_id", clientId);
    emit("consumer.start", started);
    consumer.subscribe(ConsumerApp.topicsOf(spec.path("topics")));
    emit("consumer.subscribed", null);  // the first poll() follows (docs/fidelity.md, finding 24)
    try {
      loop();
    } finally {
      flushPolls();
      acceptImplicitly();
      try {
        consumer.close();
      } catch (RuntimeException e) {
        emitError("close", e);
      }
      emit("consumer.closed", null);
      OUT.flush();
      System.exit(0);
    }
  }

  private void loop() {
    while (!stopping) {
      for (String[] cmd; (cmd = commands.poll()) != null; ) handle(cmd);
      if (stopping) break;
      ConsumerRecords<byte[], byte[]> records;
      // implicit mode: this poll() accepts what the previous one returned
      acceptImplicitly();
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
      int n = records.count();
      if (n == 0) {
        emptyPoll();
      } else {
        flushPolls();
        process(records, n);
      }
      Clock.sleepMs(perPoll.sample(random));
    }
  }

  private void process(ConsumerRecords<byte[], byte[]> records, int n) {
    List<Run> runs = runsOf(records);
    for (Run r : runs) emitRecords(r, "AVAILABLE", "ACQUIRED", r.records.size(), r.first, r.last, "fetch");
    Clock.sleepMs(perBatch.sample(random));
    for (Run r : runs) {
      int accepted = 0, released = 0, rejected = 0;
      for (ConsumerRecord<byte[], byte[]> rec : r.records) {
        Clock.sleepMs(perRecord.sample(random));
        if (!explicit) {
          accepted++;
          continue;
        }
        double x = random.nextDouble();
        AcknowledgeType t = x < reject ? AcknowledgeType.REJECT : x < reject + release ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
        consumer.acknowledge(rec, t);
        String to = t == AcknowledgeType.ACCEPT ? "ACKNOWLEDGED"
            : t == AcknowledgeType.REJECT || r.deliveryCount >= deliveryLimit ? "ARCHIVED" : "AVAILABLE";
        emitRecords(r, "ACQUIRED", to, 1, rec.offset(), rec.offset(), t.name());
        if (t == AcknowledgeType.ACCEPT) accepted++;
        else if (t == AcknowledgeType.RELEASE) released++;
        else rejected++;
      }
      ObjectNode f = JSON.createObjectNode();
      f.put("partition", r.partition);
      f.put("first_offset", r.first);
      f.put("last_offset", r.last);
      f.put("delivery_count", r.deliveryCount);
      f.put("records", r.records.size());
      f.put("accepted", accepted);
      f.put("released", released);
      f.put("rejected", rejected);
      emit("share.process", f);
    }
    if (!explicit) unacknowledged = runs;
  }

  private void acceptImplicitly() {
    if (explicit || unacknowledged.isEmpty()) return;
    for (Run r : unacknowledged) emitRecords(r, "ACQUIRED", "ACKNOWLEDGED", r.records.size(), r.first, r.last, "ACCEPT");
    unacknowledged = new ArrayList<>();
  }

  static List<Run> runsOf(ConsumerRecords<byte[], byte[]> records) {
    List<TopicPartition> parts = new ArrayList<>(records.partitions());
    parts.sort(Comparator.comparing(TopicPartition::toString, Comparator.comparing(ConsumerApp::tpKey)));
    List<Run> runs = new ArrayList<>();
    for (TopicPartition tp : parts) {
      Run cur = null;
      for (ConsumerRecord<byte[], byte[]> rec : records.records(tp)) {
        int dc = rec.deliveryCount().map(Short::intValue).orElse(1);
        if (cur == null || rec.offset() != cur.last + 1 || dc != cur.deliveryCount) {
          cur = new Run(tp.toString(), rec.offset(), rec.offset(), dc, new ArrayList<>());
          runs.add(cur);
        }
        cur.records.add(rec);
        cur = new Run(cur.partition, cur.first, rec.offset(), dc, cur.records);
        runs.set(runs.size() - 1, cur);
      }
    }
    return runs;
  }

  private void emitRecords(Run r, String from, String to, int count, long first, long last, String cause) {
    ObjectNode f = JSON.createObjectNode();
    f.put("group", group);
    f.put("partition", r.partition);
    f.put("from", from);
    f.put("to", to);
    f.put("first_offset", first);
    f.put("last_offset", last);
    f.put("records", count);
    f.put("delivery_count", r.deliveryCount);
    f.put("cause", cause);
    emit("share.records", f);
  }

  private void handle(String[] cmd) {
    if (cmd[0].equals("stall")) {
      flushPolls();
      clock.sleepUntilUs(Long.parseLong(cmd[1]));
      emit("consumer.resume", null);
    }
  }
}
