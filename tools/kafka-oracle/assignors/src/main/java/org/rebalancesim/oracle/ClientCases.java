package org.rebalancesim.oracle;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Client-side (classic protocol) cases: a random group is assigned by Kafka's own assignor,
 * optionally after a previous round that gives the members their owned partitions.
 */
final class ClientCases {
    private ClientCases() {}

    /** One member of a generated group, as our vectors describe it. */
    static final class Member {
        String id;
        String instanceId;
        List<String> topics = new ArrayList<>();
        String rack;
        List<TopicPartition> owned = new ArrayList<>();
        int generation = -1; // -1: none
    }

    static final class Group {
        Map<String, Integer> topics = new TreeMap<>();
        Map<String, List<List<String>>> partitionRacks; // null: no broker has a rack
        List<Member> members = new ArrayList<>();
    }

    static ConsumerPartitionAssignor assignor(String name) {
        return switch (name) {
            case "range" -> new RangeAssignor();
            case "roundrobin" -> new RoundRobinAssignor();
            case "sticky" -> new StickyAssignor();
            case "cooperative-sticky" -> new CooperativeStickyAssignor();
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** Brokers: one per rack (or one rackless broker per replica slot); replicas on the partition's racks. */
    static Cluster cluster(Group g) {
        List<Node> nodes = new ArrayList<>();
        Map<String, Node> byRack = new TreeMap<>();
        if (g.partitionRacks != null) {
            TreeSet<String> racks = new TreeSet<>();
            g.partitionRacks.values().forEach(l -> l.forEach(racks::addAll));
            int id = 0;
            for (String r : racks) {
                Node n = new Node(id++, "b" + id, 9092, r);
                nodes.add(n);
                byRack.put(r, n);
            }
        }
        Node plain = new Node(100, "b100", 9092);
        if (nodes.isEmpty()) nodes.add(plain);
        List<PartitionInfo> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> t : g.topics.entrySet()) {
            for (int p = 0; p < t.getValue(); p++) {
                Node[] replicas;
                if (g.partitionRacks != null) {
                    List<String> racks = g.partitionRacks.get(t.getKey()).get(p);
                    replicas = racks.stream().map(byRack::get).toArray(Node[]::new);
                } else {
                    replicas = new Node[] {plain};
                }
                parts.add(new PartitionInfo(t.getKey(), p, replicas[0], replicas, replicas));
            }
        }
        return new Cluster("c", nodes, parts, new HashSet<>(), new HashSet<>());
    }

    /**
     * The owned list the way the eager StickyAssignor's user data decodes it: grouped by topic in
     * the order of a HashMap filled with computeIfAbsent (which puts a new key at the head of its
     * bucket, so colliding topics come out in reverse order of first appearance). What Kafka does
     * when it encodes the member's assignment; applied once to what the member holds.
     */
    static List<TopicPartition> stickyDecodedOrder(List<TopicPartition> owned) {
        Map<String, List<Integer>> byTopic = new HashMap<>();
        for (TopicPartition tp : owned) byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        List<TopicPartition> out = new ArrayList<>();
        for (Map.Entry<String, List<Integer>> e : byTopic.entrySet()) {
            for (int p : e.getValue()) out.add(new TopicPartition(e.getKey(), p));
        }
        return out;
    }

    static Map<String, List<TopicPartition>> run(String name, Group g) {
        ConsumerPartitionAssignor assignor = assignor(name);
        Map<String, Subscription> subs = new HashMap<>(); // the leader's map: ConsumerCoordinator uses a HashMap
        for (Member m : g.members) {
            ByteBuffer userData = null;
            if (name.equals("sticky") && m.generation >= 0) {
                StickyAssignor member = new StickyAssignor();
                member.onAssignment(new Assignment(m.owned),
                        new ConsumerGroupMetadata("g", m.generation, m.id, Optional.ofNullable(m.instanceId)));
                userData = member.subscriptionUserData(new HashSet<>(m.topics));
            } else if (name.equals("cooperative-sticky")) {
                CooperativeStickyAssignor member = new CooperativeStickyAssignor();
                member.onAssignment(new Assignment(m.owned),
                        new ConsumerGroupMetadata("g", m.generation, m.id, Optional.ofNullable(m.instanceId)));
                userData = member.subscriptionUserData(new HashSet<>(m.topics));
            }
            // An eager member revokes everything before it joins, so it reports no owned partitions.
            List<TopicPartition> ownedField = name.equals("cooperative-sticky") ? m.owned : List.of();
            Subscription s = new Subscription(m.topics, userData, ownedField, m.generation, Optional.ofNullable(m.rack));
            s.setGroupInstanceId(Optional.ofNullable(m.instanceId));
            subs.put(m.id, s);
        }
        Map<String, Assignment> out = assignor.assign(cluster(g), new GroupSubscription(subs)).groupAssignment();
        Map<String, List<TopicPartition>> result = new HashMap<>();
        for (Map.Entry<String, Assignment> e : out.entrySet()) result.put(e.getKey(), e.getValue().partitions());
        return result;
    }

    // ---- generation ------------------------------------------------------------------------

    /** Share of cases with realistic (long) member ids; small to keep committed files small. */
    static double longIds = 0.15;

    static Group randomGroup(Gen r, int sizeClass) {
        Group g = new Group();
        int nTopics = Gen.topics(r, sizeClass);
        int maxParts = Gen.maxPartitions(sizeClass);
        for (String t : r.topicNames(nTopics)) g.topics.put(t, r.chance(0.03) ? 0 : r.between(1, maxParts));
        List<String> names = new ArrayList<>(g.topics.keySet());
        boolean racks = r.chance(0.35);
        List<String> rackPool = new ArrayList<>();
        if (racks) {
            int nr = r.between(2, 3);
            for (int i = 0; i < nr; i++) rackPool.add("r" + i);
            g.partitionRacks = new TreeMap<>();
            double full = r.rnd.nextDouble();
            for (String t : names) {
                List<List<String>> perPartition = new ArrayList<>();
                for (int p = 0; p < g.topics.get(t); p++) {
                    List<String> rs = r.chance(full) ? new ArrayList<>(rackPool) : r.subset(rackPool, 1);
                    rs.sort(null);
                    perPartition.add(rs);
                }
                g.partitionRacks.put(t, perPartition);
            }
        }
        int n = r.members(sizeClass);
        List<String> ids = r.memberIds("c", n, sizeClass == 0 ? 20 : n * 3, longIds);
        boolean homogeneous = r.chance(0.5);
        List<String> common = r.subset(names, 1);
        if (r.chance(0.05)) common.add("no_such"); // a topic that does not exist
        boolean statics = r.chance(0.2);
        for (String id : ids) {
            Member m = new Member();
            m.id = id;
            if (statics && r.chance(0.6)) m.instanceId = "i" + r.rnd.nextInt(n * 3 + 10);
            if (homogeneous) {
                m.topics = new ArrayList<>(common);
            } else {
                m.topics = r.subset(names, 1);
                if (r.chance(0.03)) m.topics.add("no_such");
            }
            if (racks || r.chance(0.1)) {
                double p = r.rnd.nextDouble();
                if (p < 0.8 && !rackPool.isEmpty()) m.rack = r.pick(rackPool);
                else if (p < 0.9) m.rack = "r9";
            }
            g.members.add(m);
        }
        // Duplicate instance ids are invalid in a real group: keep the first.
        HashSet<String> seen = new HashSet<>();
        for (Member m : g.members) if (m.instanceId != null && !seen.add(m.instanceId)) m.instanceId = null;
        return g;
    }

    /** Gives the members owned partitions from a previous round of the same assignor on a perturbed group. */
    static void previousRound(Gen r, String name, Group g) {
        Group prev = new Group();
        prev.partitionRacks = g.partitionRacks;
        // Partitions may have grown since (never shrink in Kafka).
        for (Map.Entry<String, Integer> t : g.topics.entrySet()) {
            int n = t.getValue();
            prev.topics.put(t.getKey(), r.chance(0.15) && n > 1 ? r.between(1, n - 1) : n);
        }
        if (prev.partitionRacks != null) {
            Map<String, List<List<String>>> pr = new TreeMap<>();
            for (String t : prev.topics.keySet()) pr.put(t, g.partitionRacks.get(t).subList(0, prev.topics.get(t)));
            prev.partitionRacks = pr;
        }
        List<Member> old = new ArrayList<>();
        for (Member m : g.members) {
            if (r.chance(0.75)) {
                Member p = new Member();
                p.id = m.id;
                p.instanceId = m.instanceId;
                p.rack = m.rack;
                p.topics = r.chance(0.1) ? r.subset(new ArrayList<>(g.topics.keySet()), 1) : m.topics;
                old.add(p);
            }
        }
        int departed = r.between(0, 2);
        for (int i = 0; i < departed; i++) {
            Member p = new Member();
            p.id = "d" + i;
            p.topics = g.members.get(0).topics;
            old.add(p);
        }
        if (old.isEmpty()) return;
        prev.members = old;
        int generation = r.between(1, 30);
        Map<String, List<TopicPartition>> before = run(name, prev);
        Map<String, Member> byId = new HashMap<>();
        for (Member m : g.members) byId.put(m.id, m);
        for (Member p : old) {
            Member m = byId.get(p.id);
            if (m == null) continue;
            m.owned = new ArrayList<>(before.getOrDefault(p.id, List.of()));
            m.generation = generation;
            if (r.chance(0.08)) {
                // A member that missed the last rebalance: an older generation and stale claims.
                m.generation = generation - r.between(1, 2);
                Member other = r.pick(old);
                List<TopicPartition> stale = new ArrayList<>(before.getOrDefault(other.id, List.of()));
                r.shuffle(stale);
                m.owned.addAll(stale.subList(0, stale.size() / 2));
                if (m.generation < 1) m.generation = -1;
                if (m.generation < 0) m.owned.clear();
            } else if (r.chance(0.03)) {
                // Two members of one generation claiming the same partition.
                Member other = r.pick(old);
                List<TopicPartition> theirs = before.getOrDefault(other.id, List.of());
                if (!theirs.isEmpty()) m.owned.add(r.pick(theirs));
            }
        }
    }

    // ---- writing ---------------------------------------------------------------------------

    static Map<String, Object> caseJson(String id, String name, Group g, Map<String, List<TopicPartition>> out) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("id", id);
        c.put("topics", g.topics);
        if (g.partitionRacks != null) c.put("partition_racks", g.partitionRacks);
        List<Object> members = new ArrayList<>();
        for (Member m : g.members) {
            Map<String, Object> mj = new LinkedHashMap<>();
            mj.put("id", m.id);
            mj.put("subscriptions", m.topics);
            if (m.rack != null) mj.put("rack", m.rack);
            if (m.instanceId != null) mj.put("instance_id", m.instanceId);
            if (!m.owned.isEmpty()) {
                List<Object> owned = new ArrayList<>();
                // Vectors give owned partitions as the assignor decodes them.
                List<TopicPartition> decoded = name.equals("sticky") ? stickyDecodedOrder(m.owned) : m.owned;
                for (TopicPartition tp : decoded) owned.add(Json.pair(tp.topic(), tp.partition()));
                mj.put("owned", owned);
            }
            if (m.generation >= 0) mj.put("generation", m.generation);
            members.add(mj);
        }
        c.put("members", members);
        Map<String, Object> expected = new TreeMap<>();
        for (Member m : g.members) {
            Map<String, TreeSet<Integer>> byTopic = new TreeMap<>();
            for (TopicPartition tp : out.getOrDefault(m.id, List.of())) {
                byTopic.computeIfAbsent(tp.topic(), t -> new TreeSet<>()).add(tp.partition());
            }
            expected.put(m.id, byTopic);
        }
        c.put("expected", expected);
        // Kafka's output order feeds the next round's owned partitions (sticky assignors are order-sensitive).
        if (name.equals("cooperative-sticky") || name.equals("sticky")) {
            Map<String, Object> ordered = new TreeMap<>();
            for (Member m : g.members) {
                List<Object> l = new ArrayList<>();
                for (TopicPartition tp : out.getOrDefault(m.id, List.of())) l.add(Json.pair(tp.topic(), tp.partition()));
                ordered.put(m.id, l);
            }
            c.put("expected_ordered", ordered);
        }
        return c;
    }

    /**
     * Draws until Kafka's assignor returns: draws on which it throws (a NullPointerException in
     * AbstractStickyAssignor's general builder, see fidelity/assignors/README.md) are counted, the
     * first one's input kept for the report (ServerCases.firstCrash), and drawn again.
     */
    static Map<String, Object> generate(Gen r, String name, String id, int sizeClass) {
        while (true) {
            Group g = randomGroup(r, sizeClass);
            try {
                if ((name.equals("sticky") || name.equals("cooperative-sticky")) && r.chance(0.8)) previousRound(r, name, g);
                // The leader's subscription map is a HashMap keyed by member id: list members in any order.
                r.shuffle(g.members);
                return caseJson(id, name, g, run(name, g));
            } catch (RuntimeException e) {
                ServerCases.crashes++;
                if (ServerCases.firstCrash == null) {
                    ServerCases.firstCrash = id + ": " + e + " on " + Json.write(caseJson(id, name, g, Map.of()));
                }
            }
        }
    }
}
