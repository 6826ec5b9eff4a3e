package org.rebalancesim.oracle;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Differential assignor oracle. Generates seeded random groups, runs Apache Kafka 4.4.0's own
 * assignors and reconciliation state machine on them, and writes the inputs with Kafka's outputs
 * as conformance vectors (the format of tests/conformance/README.md), one file per assignor
 * and size class. Same seed and counts give byte-identical files.
 *
 * Usage: Main --out DIR [--seed N] [--cases N] [--big N]
 *   --cases: small and medium cases per assignor (default 8000)
 *   --big:   cases per assignor with 300 to 1000 members (default 2)
 *   --long-ids F: share of cases with Kafka-style long member ids (default 0.15)
 *   --medium: draw 3 to 120 members instead of mostly tiny groups (for bug hunts, not committed)
 */
public final class Main {
    static final String KAFKA_VERSION = "4.4.0";

    record Kind(String file, String kind, String assignor) {}

    static final List<Kind> KINDS = List.of(
            new Kind("client.range", "client-assignor", "range"),
            new Kind("client.roundrobin", "client-assignor", "roundrobin"),
            new Kind("client.sticky", "client-assignor", "sticky"),
            new Kind("client.cooperative-sticky", "client-assignor", "cooperative-sticky"),
            new Kind("coordinator.uniform", "server-assignor", "uniform"),
            new Kind("coordinator.range", "server-assignor", "server-range"),
            new Kind("coordinator.simple", "share-assignor", "simple"),
            new Kind("coordinator.current-assignment-builder", "current-assignment-builder", null));

    public static void main(String[] args) throws IOException {
        Path out = null;
        long seed = 1;
        int cases = 8000;
        int big = 2;
        boolean medium = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--cases" -> cases = Integer.parseInt(args[++i]);
                case "--big" -> big = Integer.parseInt(args[++i]);
                case "--medium" -> medium = true;
                case "--long-ids" -> ClientCases.longIds = Double.parseDouble(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i] + "\nusage: Main --out DIR [--seed N] [--cases N] [--big N]");
                    System.exit(2);
                }
            }
        }
        if (out == null) {
            System.err.println("usage: Main --out DIR [--seed N] [--cases N] [--big N]");
            System.exit(2);
        }
        Main.medium = medium;
        Files.createDirectories(out);
        for (Kind k : KINDS) {
            int small = k.assignor == null ? cases * 2 / 7 : cases; // reconciliation cases are the largest
            write(out.resolve(k.file + ".json"), k, seed, small, false);
            if (k.assignor != null && big > 0) write(out.resolve(k.file + ".large.json"), k, seed, big, true);
        }
    }

    /** Size class of the i-th case of a file: mostly tiny groups, some up to a dozen members, a few up to 120. */
    static boolean medium = false;

    static int sizeClass(int i, boolean large) {
        if (large) return 3;
        if (medium) return i % 10 == 9 ? 2 : 1; // --medium: a bug hunt over bigger groups
        if (i % 500 == 499) return 2;
        return i % 20 == 19 ? 1 : 0;
    }

    static void write(Path file, Kind k, long seed, int n, boolean large) throws IOException {
        String tag = k.file + (large ? ".large" : "");
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            Map<String, Object> head = new LinkedHashMap<>();
            head.put("source", "tools/kafka-oracle/assignors: random inputs run through Apache Kafka " + KAFKA_VERSION
                    + " (org.apache.kafka:kafka-clients / kafka-group-coordinator from Maven Central)");
            head.put("commit", "kafka-" + KAFKA_VERSION);
            head.put("kind", k.kind);
            head.put("assignor", k.assignor == null ? "CurrentAssignmentBuilder" : k.assignor);
            head.put("split", "oracle");
            head.put("notes", "generated: make oracle-assignors SEED=" + seed + "; " + n + " cases, each one call of Kafka's class"
                    + "; expected = Kafka's output");
            // File-level defaults (a conformance-format extension): keys every case inherits.
            Map<String, Object> defaults = new LinkedHashMap<>();
            if (k.assignor != null) defaults.put("assignor", k.assignor);
            if (k.kind.equals("client-assignor")) defaults.put("member_set_exact", true);
            if (k.kind.equals("server-assignor") || k.kind.equals("share-assignor")) defaults.put("member_iteration_order", "as_listed");
            if (k.kind.equals("server-assignor")) defaults.put("inverted_target_assignment", "from_members");
            head.put("defaults", defaults);
            String h = Json.write(head);
            w.write(h, 0, h.length() - 1);
            w.write(",\"cases\":[\n");
            for (int i = 0; i < n; i++) {
                Gen r = new Gen(seed, tag, i);
                String id = String.valueOf(i);
                Map<String, Object> c;
                if (k.kind.equals("client-assignor")) c = ClientCases.generate(r, k.assignor, id, sizeClass(i, large));
                else if (k.assignor == null) c = CabCases.generate(r, id);
                else c = ServerCases.generate(r, k.assignor, id, sizeClass(i, large));
                w.write(Json.write(c));
                w.write(i + 1 < n ? ",\n" : "\n");
            }
            w.write("]}\n");
        }
        System.out.println("wrote " + file + " (" + n + " cases)");
        if (ServerCases.crashes > 0) {
            System.out.println("  Kafka's assignor threw on " + ServerCases.crashes + " draws (drawn again); first: " + ServerCases.firstCrash);
            ServerCases.crashes = 0;
            ServerCases.firstCrash = null;
        }
    }
}
