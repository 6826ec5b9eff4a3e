package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The groups' __consumer_offsets records, read back with Kafka's own
 * {@code org.apache.kafka.tools.DumpLogSegments --offsets-decoder} and written as the simulator's
 * {@code record} trace events.
 */
final class OffsetsDump {
  private final Cluster cluster;
  private final JsonNode scenario;
  private final long originWallMs;
  private final String classpath;
  private final Path tmp;

  OffsetsDump(Cluster cluster, JsonNode scenario, Clock clock, long originWallMs, String classpath, Path tmp) {
    this.cluster = cluster;
    this.scenario = scenario;
    this.originWallMs = originWallMs;
    this.classpath = classpath;
    this.tmp = tmp;
  }

  static int numPartitions(JsonNode scenario) {
    return scenario.path("cluster").path("config").path("offsets.topic.num.partitions").asInt(50);
  }

  /** Kafka's shard of a group: Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions. */
  static int partitionFor(String group, int n) {
    int h = group.hashCode();
    return (h == Integer.MIN_VALUE ? 0 : Math.abs(h)) % n;
  }

  /** Where DumpLogSegments' own output is kept beside the trace (null: not kept). */
  Path copyTo;

  List<ObjectNode> records(List<ObjectNode> trace, java.util.Map<String, String> topicNames) throws Exception {
    TreeSet<String> groups = new TreeSet<>();
    scenario.path("consumers").forEach(c -> groups.add(c.path("group").asText()));
    int n = numPartitions(scenario);
    TreeSet<Integer> parts = new TreeSet<>();
    groups.forEach(g -> parts.add(partitionFor(g, n)));
    List<ObjectNode> out = new ArrayList<>();
    for (int p : parts) {
      Path dir = longestReplica(p);
      if (dir == null) continue;
      List<String> files = new ArrayList<>();
      try (Stream<Path> s = Files.list(dir)) {
        s.filter(f -> f.toString().endsWith(".log")).sorted().forEach(f -> files.add(f.toString()));
      }
      if (files.isEmpty()) continue;
      Path dump = tmp.resolve("dump-" + p + ".txt");
      Process pr = new ProcessBuilder(Oracle.javaBin(), "-Xmx512m", "-cp", classpath, "org.apache.kafka.tools.DumpLogSegments",
          "--files", String.join(",", files), "--offsets-decoder", "--print-data-log", "--deep-iteration")
          .redirectErrorStream(true).redirectOutput(dump.toFile()).start();
      if (!pr.waitFor(120, TimeUnit.SECONDS)) {
        pr.destroyForcibly();
        throw new IllegalStateException("DumpLogSegments did not finish in 120 s");
      }
      if (copyTo != null) {
        Files.createDirectories(copyTo);
        Files.copy(dump, copyTo.resolve("__consumer_offsets-" + p + ".txt"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
      OffsetsDecoder.parse(Files.readAllLines(dump), p, groups, originWallMs, topicNames, trace, out);
    }
    return out;
  }

  /** The replica of __consumer_offsets-p with the most data (the leader's, in practice). */
  private Path longestReplica(int p) throws IOException {
    Path best = null;
    long bestSize = -1;
    for (int b = 0; b < cluster.size; b++) {
      Path d = cluster.logDir(b).resolve("__consumer_offsets-" + p);
      if (!Files.isDirectory(d)) continue;
      long size = 0;
      try (Stream<Path> s = Files.list(d)) {
        for (Path f : (Iterable<Path>) s::iterator) if (f.toString().endsWith(".log")) size += Files.size(f);
      }
      if (size > bestSize) {
        bestSize = size;
        best = d;
      }
    }
    return best;
  }
}
