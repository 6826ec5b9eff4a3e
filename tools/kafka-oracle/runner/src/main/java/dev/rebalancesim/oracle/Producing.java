package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The scenario's production with a real KafkaProducer: initial_records before the start, then
 * every partition of a producing topic at its rate (the k-th record of a constant rate r at
 * ceil(k*1000/r) ms after the rate took effect, as the simulator does), or one gap draw per record.
 */
final class Producing implements AutoCloseable {
  private final KafkaProducer<byte[], byte[]> producer;
  private final JsonNode topics;
  private final Map<String, Rate> rates = new TreeMap<>();
  private final Map<String, Integer> partitions = new TreeMap<>();
  private final Random random = new Random(17);
  private Thread thread;
  private volatile boolean closed;
  private Clock clock;

  /** One topic's production: a constant rate or a gap distribution, from a start time. */
  private static final class Rate {
    double perSec;
    Dist gap;
    long fromUs;
    /** Each partition's origin of the rate: the rate's start, or the partition's creation. */
    long[] originUs = new long[0];
    long[] count = new long[0];
    long[] nextUs = new long[0];
  }

  Producing(String bootstrap, JsonNode topics) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    p.put("acks", "1");
    p.put("linger.ms", "0");
    p.put("client.id", "kafka-oracle-producer");
    producer = new KafkaProducer<>(p);
    this.topics = topics;
    for (JsonNode t : topics) partitions.put(t.path("name").asText(), t.path("partitions").asInt());
  }

  void initialRecords() throws Exception {
    byte[] v = new byte[16];
    for (JsonNode t : topics) {
      long n = t.path("initial_records").asLong(0);
      String name = t.path("name").asText();
      for (int p = 0; p < partitions.get(name); p++) {
        for (long k = 0; k < n; k++) producer.send(new ProducerRecord<>(name, p, null, v));
      }
    }
    producer.flush();
  }

  /**
   * Before the scenario's start: a record to each partition of another topic every 10 ms for
   * {@code millis}, so that the brokers' produce, replica-fetch and log-append paths and this
   * producer are compiled before time 0 rather than in the scenario's first seconds (finding 30).
   */
  void warmUp(String topic, int topicPartitions, long millis) throws Exception {
    byte[] v = new byte[16];
    long end = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() < end) {
      for (int p = 0; p < topicPartitions; p++) producer.send(new ProducerRecord<>(topic, p, null, v));
      Thread.sleep(10);
    }
    producer.flush();
  }

  synchronized void start(Clock c) {
    clock = c;
    for (JsonNode t : topics) {
      JsonNode pr = t.get("produce");
      if (pr == null) continue;
      set(t.path("name").asText(), pr, 0);
    }
    thread = new Thread(this::loop, "oracle-producer");
    thread.setDaemon(true);
    thread.start();
  }

  private void set(String topic, JsonNode pr, long fromUs) {
    Rate r = new Rate();
    r.fromUs = fromUs;
    if (pr.isNumber()) r.perSec = pr.asDouble();
    else if (pr.has("records_per_sec")) r.perSec = pr.get("records_per_sec").asDouble();
    else if (pr.has("gap_ms")) r.gap = Dist.of(pr.get("gap_ms"));
    if (r.perSec <= 0 && r.gap == null) {
      rates.remove(topic);
      return;
    }
    int n = partitions.get(topic);
    r.count = new long[n];
    r.nextUs = new long[n];
    r.originUs = new long[n];
    java.util.Arrays.fill(r.originUs, fromUs);
    for (int p = 0; p < n; p++) r.nextUs[p] = next(r, p);
    rates.put(topic, r);
  }

  private long next(Rate r, int p) {
    if (r.gap != null) {
      long base = r.count[p] == 0 && r.nextUs[p] == 0 ? r.originUs[p] : r.nextUs[p];
      return base + Math.round(r.gap.sample(random) * 1000);
    }
    long k = r.count[p] + 1;
    return r.originUs[p] + (long) Math.ceil(k * 1_000_000.0 / r.perSec);
  }

  synchronized void change(String topic, JsonNode event) {
    set(topic, event, clock.nowUs());
    notifyAll();
  }

  synchronized void partitionsChanged(String topic, int n) {
    partitions.put(topic, n);
    Rate r = rates.get(topic);
    if (r == null) return;
    int old = r.count.length;
    long[] c = java.util.Arrays.copyOf(r.count, n);
    long[] nx = java.util.Arrays.copyOf(r.nextUs, n);
    r.count = c;
    r.nextUs = nx;
    r.originUs = java.util.Arrays.copyOf(r.originUs, n);
    long now = clock.nowUs();
    for (int p = old; p < n; p++) {
      // a new partition produces at the topic's rate from its creation on: its own origin, so
      // that its k-th record is due k periods after the creation, not k periods after the run's
      // start (which made the producer catch up the whole run at once)
      r.originUs[p] = now;
      r.nextUs[p] = next(r, p);
    }
  }

  private void loop() {
    byte[] v = new byte[16];
    while (!closed) {
      String topic = null;
      int part = -1;
      long when = Long.MAX_VALUE;
      synchronized (this) {
        for (var e : rates.entrySet()) {
          Rate r = e.getValue();
          for (int p = 0; p < r.nextUs.length; p++) {
            if (r.nextUs[p] < when) {
              when = r.nextUs[p];
              topic = e.getKey();
              part = p;
            }
          }
        }
        if (topic == null) {
          try {
            wait(100);
          } catch (InterruptedException e) {
            return;
          }
          continue;
        }
      }
      long now = clock.nowUs();
      if (when > now) {
        long waitUs = Math.min(when - now, 20_000);
        Clock.sleepMs(waitUs / 1000.0);
        continue;
      }
      synchronized (this) {
        Rate r = rates.get(topic);
        if (r == null || part >= r.nextUs.length || r.nextUs[part] != when) continue;
        producer.send(new ProducerRecord<>(topic, part, null, v));
        r.count[part]++;
        r.nextUs[part] = r.gap != null ? when + Math.round(r.gap.sample(random) * 1000) : next(r, part);
      }
    }
  }

  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    notifyAll();
    producer.close(java.time.Duration.ofSeconds(5));
  }
}
