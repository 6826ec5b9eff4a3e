package org.rebalancesim.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/** Seeded draws shared by the generators. One instance per case, so cases are independent. */
final class Gen {
    final SplittableRandom rnd;

    Gen(long seed, String kind, int index) {
        long h = seed * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < kind.length(); i++) h = (h ^ kind.charAt(i)) * 0x100000001B3L;
        this.rnd = new SplittableRandom(h ^ ((long) index * 0xC2B2AE3D27D4EB4FL));
    }

    int between(int lo, int hi) { // inclusive
        return lo + rnd.nextInt(hi - lo + 1);
    }

    boolean chance(double p) {
        return rnd.nextDouble() < p;
    }

    <T> T pick(List<T> xs) {
        return xs.get(rnd.nextInt(xs.size()));
    }

    <T> void shuffle(List<T> xs) {
        for (int i = xs.size() - 1; i > 0; i--) Collections.swap(xs, i, rnd.nextInt(i + 1));
    }

    /** A random non-empty subset of xs (or empty when xs is), in random order. */
    <T> List<T> subset(List<T> xs, int min) {
        List<T> copy = new ArrayList<>(xs);
        shuffle(copy);
        if (copy.isEmpty()) return copy;
        int n = between(Math.min(min, copy.size()), copy.size());
        return new ArrayList<>(copy.subList(0, n));
    }

    /** Distinct short ids: prefix + number drawn from [0, spread), so HashMap order differs from sorted order. */
    List<String> ids(String prefix, int n, int spread) {
        List<String> out = new ArrayList<>();
        java.util.Set<Integer> used = new java.util.HashSet<>();
        int range = Math.max(spread, n * 2);
        while (out.size() < n) {
            int k = rnd.nextInt(range);
            if (used.add(k)) out.add(prefix + k);
        }
        return out;
    }

    /**
     * Member ids in one of three styles per case: short ("c17"), the classic consumer's
     * "consumer-<group>-<n>-<uuid>", or a 22-character base64 Uuid as KIP-848 clients send.
     */
    List<String> memberIds(String prefix, int n, int spread, double longShare) {
        List<String> ids = ids(prefix, n, spread);
        if (!chance(longShare)) return ids;
        boolean classic = chance(0.5);
        List<String> out = new ArrayList<>();
        for (String id : ids) {
            java.util.UUID u = new java.util.UUID(rnd.nextLong(), rnd.nextLong());
            if (classic) {
                out.add("consumer-g-" + id.substring(prefix.length()) + "-" + u);
            } else {
                out.add(new org.apache.kafka.common.Uuid(u.getMostSignificantBits(), u.getLeastSignificantBits()).toString());
            }
        }
        return out;
    }

    /** Topic names: "t0", "t1", ... or, in some cases, random names whose order and hashes differ. */
    List<String> topicNames(int n) {
        List<String> out = new ArrayList<>();
        if (!chance(0.25)) {
            for (int t = 0; t < n; t++) out.add("t" + t);
            return out;
        }
        java.util.Set<String> used = new java.util.HashSet<>();
        while (out.size() < n) {
            StringBuilder s = new StringBuilder();
            int len = between(1, 6);
            for (int i = 0; i < len; i++) s.append((char) ('a' + rnd.nextInt(26)));
            if (chance(0.3)) s.append('-').append(rnd.nextInt(100));
            if (used.add(s.toString())) out.add(s.toString());
        }
        return out;
    }

    /** Group size classes: mostly tiny, some up to a dozen members, rare ones up to 120, big ones up to 1000. */
    int members(int sizeClass) {
        return switch (sizeClass) {
            case 0 -> between(1, 5);
            case 1 -> between(3, 12);
            case 2 -> between(20, 120);
            default -> chance(0.5) ? 1000 : between(300, 999);
        };
    }

    static int topics(Gen r, int sizeClass) {
        return switch (sizeClass) {
            case 0 -> r.between(1, 3);
            case 1 -> r.between(1, 4);
            case 2 -> r.between(2, 6);
            default -> r.between(2, 5);
        };
    }

    static int maxPartitions(int sizeClass) {
        return switch (sizeClass) {
            case 0 -> 7;
            case 1 -> 12;
            case 2 -> 60;
            default -> 300;
        };
    }
}
