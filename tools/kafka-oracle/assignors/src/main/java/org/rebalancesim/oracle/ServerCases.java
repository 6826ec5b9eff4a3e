package org.rebalancesim.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataDelta;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.SimpleAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.coordinator.group.modern.TopicIds;

/**
 * Coordinator-side cases (consumer groups' uniform and range, share groups' simple): the group
 * spec is built the way the coordinator builds it (subscribed names in a HashSet, TopicIds over
 * the metadata image, targets replayed into HashMaps) and Kafka's assignor runs on it.
 */
final class ServerCases {
    private ServerCases() {}

    /** A metadata image with just topics, names, ids and partition counts (no racks). */
    static final class Image implements CoordinatorMetadataImage {
        final Map<String, TopicMetadata> byName = new HashMap<>();
        final Map<Uuid, TopicMetadata> byId = new HashMap<>();

        void add(String name, Uuid id, int partitions) {
            TopicMetadata t = new TopicMetadata() {
                @Override public String name() { return name; }
                @Override public Uuid id() { return id; }
                @Override public int partitionCount() { return partitions; }
                @Override public List<String> partitionRacks(int partition) { return List.of(); }
            };
            byName.put(name, t);
            byId.put(id, t);
        }

        @Override public Set<Uuid> topicIds() { return Collections.unmodifiableSet(byId.keySet()); }
        @Override public Set<String> topicNames() { return Collections.unmodifiableSet(byName.keySet()); }
        @Override public Optional<TopicMetadata> topicMetadata(String name) { return Optional.ofNullable(byName.get(name)); }
        @Override public Optional<TopicMetadata> topicMetadata(Uuid id) { return Optional.ofNullable(byId.get(id)); }
        @Override public CoordinatorMetadataDelta emptyDelta() { throw new UnsupportedOperationException(); }
        @Override public long version() { return 1; }
        @Override public boolean isEmpty() { return byId.isEmpty(); }
    }

    /** Kafka's assignor failed with something other than PartitionAssignorException. */
    static final class KafkaCrash extends RuntimeException {
        KafkaCrash(RuntimeException cause) { super(cause); }
    }

    static int crashes = 0;
    static String firstCrash = null;

    static final class Member {
        String id;
        String instanceId;
        String rack;
        List<String> topics = new ArrayList<>();
        /** topic name -> partitions of the current target (names of deleted topics too). */
        Map<String, List<Integer>> assigned = new TreeMap<>();
    }

    static final class Group {
        Map<String, Integer> topics = new TreeMap<>();      // in the metadata
        Map<String, Uuid> ids = new TreeMap<>();            // every topic ever named, deleted ones too
        List<Member> members = new ArrayList<>();
        Map<String, Set<Integer>> assignable;               // share groups: null = all
    }

    static PartitionAssignor assignor(String name) {
        return switch (name) {
            case "uniform" -> new UniformAssignor();
            case "server-range" -> new RangeAssignor();
            case "simple" -> new SimpleAssignor();
            default -> throw new IllegalArgumentException(name);
        };
    }

    static SubscriptionType subscriptionType(Group g) {
        // ConsumerGroup.subscriptionType without regular expressions: homogeneous iff every
        // subscribed name is subscribed by every member.
        Map<String, Integer> count = new HashMap<>();
        for (Member m : g.members) for (String t : new HashSet<>(m.topics)) count.merge(t, 1, Integer::sum);
        for (int c : count.values()) if (c != g.members.size()) return SubscriptionType.HETEROGENEOUS;
        return SubscriptionType.HOMOGENEOUS;
    }

    static final class Spec {
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        SubscriptionType type;
        Image image = new Image();
        List<String> order = new ArrayList<>();
    }

    static Spec spec(Group g) {
        Spec s = new Spec();
        for (Map.Entry<String, Integer> t : g.topics.entrySet()) s.image.add(t.getKey(), g.ids.get(t.getKey()), t.getValue());
        s.type = subscriptionType(g);
        for (Member m : g.members) {
            // The target comes from replaying a record: Collectors.toMap into a HashMap, each
            // topic's partitions in a HashSet. Topics are put in topic-id string order.
            TreeMap<String, String> byIdString = new TreeMap<>();
            for (String t : m.assigned.keySet()) byIdString.put(g.ids.get(t).toString(), t);
            Map<Uuid, Set<Integer>> target = new HashMap<>();
            for (String t : byIdString.values()) target.put(g.ids.get(t), new HashSet<>(m.assigned.get(t)));
            Set<String> names = new HashSet<>(m.topics);
            s.members.put(m.id, new MemberSubscriptionAndAssignmentImpl(Optional.ofNullable(m.rack),
                    Optional.ofNullable(m.instanceId), new TopicIds(names, s.image), new Assignment(target)));
        }
        s.order.addAll(s.members.keySet());
        return s;
    }

    static Map<Uuid, Map<Integer, String>> inverted(Group g) {
        Map<Uuid, Map<Integer, String>> out = new HashMap<>();
        for (Member m : g.members) {
            for (Map.Entry<String, List<Integer>> e : m.assigned.entrySet()) {
                for (int p : e.getValue()) out.computeIfAbsent(g.ids.get(e.getKey()), k -> new HashMap<>()).put(p, m.id);
            }
        }
        return out;
    }

    /** Returns member -> topic name -> partitions, or null if Kafka threw. */
    static Map<String, Map<String, TreeSet<Integer>>> run(String name, Group g, Spec s) {
        GroupSpecImpl spec;
        if (name.equals("simple")) {
            Optional<Map<Uuid, Set<Integer>>> assignable = Optional.empty();
            if (g.assignable != null) {
                Map<Uuid, Set<Integer>> a = new HashMap<>();
                for (Map.Entry<String, Set<Integer>> e : g.assignable.entrySet()) a.put(g.ids.get(e.getKey()), e.getValue());
                assignable = Optional.of(a);
            }
            spec = new GroupSpecImpl(s.members, s.type, Map.of(), assignable);
        } else {
            spec = new GroupSpecImpl(s.members, s.type, inverted(g));
        }
        GroupAssignment out;
        try {
            out = assignor(name).assign(spec, new SubscribedTopicDescriberImpl(s.image));
        } catch (PartitionAssignorException e) {
            return null;
        } catch (RuntimeException e) {
            throw new KafkaCrash(e);
        }
        Map<Uuid, String> nameOf = new HashMap<>();
        g.ids.forEach((n, id) -> nameOf.put(id, n));
        Map<String, Map<String, TreeSet<Integer>>> result = new TreeMap<>();
        for (Map.Entry<String, MemberAssignment> e : out.members().entrySet()) {
            Map<String, TreeSet<Integer>> byTopic = new TreeMap<>();
            for (Map.Entry<Uuid, Set<Integer>> tp : e.getValue().partitions().entrySet()) {
                if (!tp.getValue().isEmpty()) byTopic.put(nameOf.get(tp.getKey()), new TreeSet<>(tp.getValue()));
            }
            result.put(e.getKey(), byTopic);
        }
        return result;
    }

    // ---- generation ------------------------------------------------------------------------

    static Uuid randomUuid(Gen r) {
        while (true) {
            Uuid u = new Uuid(r.rnd.nextLong(), r.rnd.nextLong());
            if (!u.equals(Uuid.ZERO_UUID) && !u.equals(Uuid.METADATA_TOPIC_ID) && !u.toString().startsWith("-")) return u;
        }
    }

    static Group randomGroup(Gen r, String name, int sizeClass) {
        Group g = new Group();
        int nTopics = Gen.topics(r, sizeClass);
        int maxParts = Gen.maxPartitions(sizeClass);
        for (String t : r.topicNames(nTopics)) {
            g.topics.put(t, r.chance(0.03) ? 0 : r.between(1, maxParts));
            g.ids.put(t, randomUuid(r));
        }
        List<String> names = new ArrayList<>(g.topics.keySet());
        int n = r.members(sizeClass);
        if (name.equals("simple") && sizeClass == 0 && r.chance(0.3)) n = r.between(4, 9); // more members than partitions
        List<String> ids = r.memberIds("m", n, sizeClass == 0 ? 20 : n * 3, ClientCases.longIds);
        boolean homogeneous = r.chance(0.5);
        List<String> common = r.subset(names, 1);
        if (r.chance(0.05)) common.add("no_such");
        for (String id : ids) {
            Member m = new Member();
            m.id = id;
            if (r.chance(0.1)) m.instanceId = "i-" + id;
            if (r.chance(0.2)) m.rack = "r" + r.between(0, 2);
            m.topics = homogeneous ? new ArrayList<>(common) : r.subset(names, r.chance(0.05) ? 0 : 1);
            g.members.add(m);
        }
        if (name.equals("simple") && r.chance(0.3)) {
            g.assignable = new TreeMap<>();
            for (String t : names) {
                if (r.chance(0.2)) continue;
                Set<Integer> ps = new TreeSet<>();
                for (int p = 0; p < g.topics.get(t); p++) if (r.chance(0.8)) ps.add(p);
                g.assignable.put(t, ps);
            }
        }
        return g;
    }

    /** Current targets from a previous run of the same assignor on a perturbed group, plus noise. */
    static void previousRound(Gen r, String name, Group g) {
        Group prev = new Group();
        prev.ids = g.ids;
        for (Map.Entry<String, Integer> t : g.topics.entrySet()) {
            int n = t.getValue();
            prev.topics.put(t.getKey(), r.chance(0.15) && n > 1 ? r.between(1, n - 1) : n);
        }
        if (r.chance(0.1)) { // a topic since deleted
            prev.topics.put("deleted_t", r.between(1, 4));
            g.ids.put("deleted_t", randomUuid(r));
        }
        for (Member m : g.members) {
            if (!r.chance(0.75)) continue;
            Member p = new Member();
            p.id = m.id;
            p.instanceId = m.instanceId;
            p.topics = r.chance(0.1) ? r.subset(new ArrayList<>(prev.topics.keySet()), 1) : m.topics;
            if (g.ids.containsKey("deleted_t") && r.chance(0.5)) {
                p.topics = new ArrayList<>(p.topics);
                p.topics.add("deleted_t");
            }
            prev.members.add(p);
        }
        if (r.chance(0.3)) {
            Member p = new Member();
            p.id = "d0";
            p.topics = new ArrayList<>(prev.topics.keySet());
            prev.members.add(p);
        }
        if (prev.members.isEmpty()) return;
        Map<String, Map<String, TreeSet<Integer>>> before = run(name, prev, spec(prev));
        if (before == null) return;
        for (Member m : g.members) {
            Map<String, TreeSet<Integer>> had = before.get(m.id);
            if (had == null) continue;
            for (Map.Entry<String, TreeSet<Integer>> e : had.entrySet()) m.assigned.put(e.getKey(), new ArrayList<>(e.getValue()));
        }
        // No partition is ever in two members' targets: the coordinator's target is one
        // assignor result, so none is made up here (Kafka's builders are undefined on that).
    }

    // ---- writing ---------------------------------------------------------------------------

    /**
     * Kafka 4.4.0's SimpleHomogeneousAssignmentBuilder.assignRemainingPartitions can throw
     * NoSuchElementException (it restarts an iterator over unfilled members after the last one was
     * removed). Such draws are counted, the first one kept for the report, and drawn again.
     */
    static Map<String, Object> generate(Gen r, String name, String id, int sizeClass) {
        while (true) {
            try {
                return attempt(r, name, id, sizeClass);
            } catch (KafkaCrash e) {
                crashes++;
                if (firstCrash == null) firstCrash = id + ": " + e.getCause();
            }
        }
    }

    static Map<String, Object> attempt(Gen r, String name, String id, int sizeClass) {
        Group g = randomGroup(r, name, sizeClass);
        if (r.chance(0.8)) previousRound(r, name, g);
        Spec s = spec(g);
        Map<String, Map<String, TreeSet<Integer>>> out = run(name, g, s);
        Map<String, Member> byId = new HashMap<>();
        for (Member m : g.members) byId.put(m.id, m);

        Map<String, Object> c = new LinkedHashMap<>();
        c.put("id", id);
        c.put("subscription_type", s.type.name());
        c.put("topics", g.topics);
        Map<String, String> ids = new TreeMap<>();
        g.ids.forEach((n, u) -> ids.put(n, u.toString()));
        c.put("topic_ids", ids);
        if (g.assignable != null) c.put("assignable_partitions", g.assignable);
        List<Object> members = new ArrayList<>();
        for (String mid : s.order) { // GroupSpec.memberIds(): the HashMap's iteration order
            Member m = byId.get(mid);
            Map<String, Object> mj = new LinkedHashMap<>();
            mj.put("id", m.id);
            mj.put("subscriptions", m.topics);
            if (m.instanceId != null) mj.put("instance_id", m.instanceId);
            if (m.rack != null) mj.put("rack", m.rack);
            if (!m.assigned.isEmpty()) {
                List<Object> pairs = new ArrayList<>();
                m.assigned.forEach((t, ps) -> ps.forEach(p -> pairs.add(Json.pair(t, p))));
                mj.put("assigned", pairs);
            }
            members.add(mj);
        }
        c.put("members", members);
        if (out == null) c.put("expected_error", "PartitionAssignorException");
        else c.put("expected", out);
        return c;
    }
}
