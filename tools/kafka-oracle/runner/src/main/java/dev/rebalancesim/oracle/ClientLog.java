package dev.rebalancesim.oracle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Stream;

/**
 * With ORACLE_CLIENT_LOG=1 every consumer JVM writes the Java client's own DEBUG log (the
 * coordinator, its heartbeat thread, the fetcher, the consumer network client, NetworkClient's
 * requests and responses, Heartbeat's TRACE line on each heartbeat sent, and AsyncKafkaConsumer's
 * TRACE lines of each application-thread pass under the consumer protocol) to
 * client-NAME-INCARNATION.log, kept in the run's folder beside the trace (record-fidelity gzips
 * it). Each line starts with System.nanoTime() of the logging thread (the clock of the trace,
 * CLOCK_MONOTONIC, shared by every JVM of the run) and the wall-clock epoch ms, then the thread and
 * the logger; client-clock.txt holds the run's origin in nanoTime, so that a line's time in the
 * trace's microseconds is (nanos - origin) / 1000. tools/kafka-oracle/client-times reads them.
 * Off by default: the client then logs nothing, as without the variable.
 */
final class ClientLog {
  private ClientLog() {}

  static boolean enabled() {
    return "1".equals(System.getenv("ORACLE_CLIENT_LOG"));
  }

  static Path file(Path tmp, String consumer, int incarnation) {
    return tmp.resolve("client-" + consumer + "-" + incarnation + ".log");
  }

  /** Writes the log4j2 configuration of one consumer JVM and returns the JVM option that uses it. */
  static String jvmOption(Path tmp, String consumer, int incarnation) throws IOException {
    Path f = tmp.resolve("log4j2-client-" + consumer + "-" + incarnation + ".properties");
    Files.writeString(f, String.join("\n",
        "status = off",
        "rootLogger.level = off",
        "appender.client.type = File",
        "appender.client.name = client",
        "appender.client.append = true",
        "appender.client.fileName = " + file(tmp, consumer, incarnation),
        "appender.client.layout.type = PatternLayout",
        "appender.client.layout.pattern = %nano %d{UNIX_MILLIS} [%t] %c{1} %level %m%n",
        logger("internals", "org.apache.kafka.clients.consumer.internals", "debug"),
        logger("heartbeat", "org.apache.kafka.clients.consumer.internals.Heartbeat", "trace"),
        // the KIP-848 application thread's passes ("Polling for fetches with timeout", finding 11)
        logger("async", "org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer", "trace"),
        logger("network", "org.apache.kafka.clients.NetworkClient", "debug"),
        logger("consumer", "org.apache.kafka.clients.consumer.KafkaConsumer", "debug"),
        ""), StandardCharsets.UTF_8);
    return "-Dlog4j2.configurationFile=" + f;
  }

  private static String logger(String key, String name, String level) {
    return String.join("\n",
        "logger." + key + ".name = " + name,
        "logger." + key + ".level = " + level,
        "logger." + key + ".additivity = false",
        "logger." + key + ".appenderRef.client.ref = client");
  }

  /** Copies every consumer's client log into the run's folder, with the clock's origin. */
  static void keep(Path tmp, Path runDir, long originNanos) throws IOException {
    List<Path> logs;
    try (Stream<Path> s = Files.list(tmp)) {
      logs = s.filter(p -> p.getFileName().toString().matches("client-.*\\.log")).sorted().toList();
    }
    for (Path f : logs) {
      Files.copy(f, runDir.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    }
    Files.writeString(runDir.resolve("client-clock.txt"),
        "origin_nanos " + originNanos + "\n", StandardCharsets.UTF_8);
  }
}
