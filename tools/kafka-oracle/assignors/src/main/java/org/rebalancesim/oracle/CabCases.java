package org.rebalancesim.oracle;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.FencedMemberEpochException;
import org.apache.kafka.common.message.ConsumerGroupHeartbeatRequestData;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.MemberState;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.coordinator.group.modern.consumer.CurrentAssignmentBuilder;
import org.apache.kafka.coordinator.group.modern.consumer.ResolvedRegularExpression;

/** KIP-848 reconciliation cases: one CurrentAssignmentBuilder.build() on a random member state. */
final class CabCases {
    private CabCases() {}

    static final String[] STATES = {"STABLE", "UNREVOKED_PARTITIONS", "UNRELEASED_PARTITIONS", "UNKNOWN"};

    static Map<String, Object> generate(Gen r, String id) {
        SHORT.clear();
        ServerCases.Image image = new ServerCases.Image();
        Map<String, Uuid> ids = new TreeMap<>();
        Map<String, Integer> counts = new TreeMap<>();
        int nTopics = r.between(1, 3);
        for (int t = 0; t < nTopics; t++) {
            Uuid u = ServerCases.randomUuid(r);
            int n = r.between(1, 8);
            ids.put("t" + t, u);
            counts.put("t" + t, n);
            image.add("t" + t, u, n);
        }
        List<String> names = new ArrayList<>(ids.keySet());
        Uuid gone = r.chance(0.1) ? ServerCases.randomUuid(r) : null; // a deleted topic still in the assignment
        List<Uuid> assignable = new ArrayList<>(ids.values());
        if (gone != null) assignable.add(gone);
        Map<Uuid, Integer> partitionsOf = new HashMap<>();
        ids.forEach((n, u) -> partitionsOf.put(u, counts.get(n)));
        if (gone != null) partitionsOf.put(gone, 3);
        ids.values().forEach(CabCases::sid);
        if (gone != null) sid(gone);

        int epoch = r.between(1, 20);
        String state = r.chance(0.55) ? "STABLE" : STATES[r.between(1, r.chance(0.1) ? 3 : 2)];
        int previous = r.chance(0.7) ? epoch - 1 : r.between(0, epoch);
        List<String> subscribed = r.subset(names, 0);
        String regex = null;
        List<String> regexTopics = null;
        if (r.chance(0.15)) {
            regex = "t.*";
            if (r.chance(0.8)) regexTopics = r.subset(names, 0);
        }
        boolean subscriptionChanged = r.chance(0.2);

        // Assigned and pending-revocation partitions with their epochs, disjoint.
        Map<Uuid, Map<Integer, Integer>> assigned = new HashMap<>();
        Map<Uuid, Map<Integer, Integer>> pending = new HashMap<>();
        for (Uuid u : assignable) {
            for (int p = 0; p < partitionsOf.get(u); p++) {
                double d = r.rnd.nextDouble();
                if (d < 0.4) assigned.computeIfAbsent(u, k -> new HashMap<>()).put(p, r.between(Math.max(0, epoch - 3), epoch));
                else if (d < 0.5 && !state.equals("STABLE")) pending.computeIfAbsent(u, k -> new HashMap<>()).put(p, r.between(Math.max(0, epoch - 3), epoch));
            }
        }
        int targetEpoch = r.chance(0.35) ? epoch : (r.chance(0.85) ? epoch + r.between(1, 3) : Math.max(0, epoch - 1));
        Map<Uuid, java.util.Set<Integer>> target = new HashMap<>();
        for (Uuid u : assignable) {
            for (int p = 0; p < partitionsOf.get(u); p++) {
                boolean had = assigned.containsKey(u) && assigned.get(u).containsKey(p);
                if (r.chance(had ? 0.7 : 0.3)) target.computeIfAbsent(u, k -> new HashSet<>()).add(p);
            }
        }
        // Which epoch owns each partition now (another member's, or -1).
        int defaultEpoch = r.chance(0.7) ? -1 : r.between(1, epoch + 1);
        Map<Uuid, Map<Integer, Integer>> byPartition = new TreeMap<>();
        for (Uuid u : assignable) {
            for (int p = 0; p < partitionsOf.get(u); p++) {
                if (r.chance(0.25)) byPartition.computeIfAbsent(u, k -> new TreeMap<>()).put(p, r.chance(0.3) ? -1 : r.between(1, epoch + 2));
            }
        }
        List<ConsumerGroupHeartbeatRequestData.TopicPartitions> owned = null;
        if (r.chance(0.7)) {
            owned = new ArrayList<>();
            Map<Uuid, TreeSet<Integer>> all = new TreeMap<>();
            for (Map<Uuid, Map<Integer, Integer>> src : List.of(assigned, pending)) {
                src.forEach((u, ps) -> ps.keySet().forEach(p -> {
                    if (r.chance(0.8)) all.computeIfAbsent(u, k -> new TreeSet<>()).add(p);
                }));
            }
            for (Map.Entry<Uuid, TreeSet<Integer>> e : all.entrySet()) {
                owned.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions()
                        .setTopicId(e.getKey()).setPartitions(new ArrayList<>(e.getValue())));
            }
        }

        ConsumerGroupMember.Builder b = new ConsumerGroupMember.Builder("member")
                .setState(MemberState.valueOf(state))
                .setMemberEpoch(epoch)
                .setPreviousMemberEpoch(previous)
                .setSubscribedTopicNames(subscribed)
                .setAssignedPartitions(assigned)
                .setPartitionsPendingRevocation(pending);
        if (regex != null) b.setSubscribedTopicRegex(regex);
        ConsumerGroupMember member = b.build();
        Map<String, ResolvedRegularExpression> resolved = new HashMap<>();
        if (regexTopics != null) resolved.put(regex, new ResolvedRegularExpression(new HashSet<>(regexTopics), 1, 0));

        Map<String, Object> expected;
        String error = null;
        try {
            ConsumerGroupMember next = new CurrentAssignmentBuilder(member)
                    .withMetadataImage(image)
                    .withTargetAssignment(targetEpoch, new Assignment(target))
                    .withHasSubscriptionChanged(subscriptionChanged)
                    .withResolvedRegularExpressions(resolved)
                    .withCurrentPartitionEpoch((u, p) -> {
                        Map<Integer, Integer> m = byPartition.get(u);
                        return m != null && m.containsKey(p) ? m.get(p) : defaultEpoch;
                    })
                    .withOwnedTopicPartitions(owned)
                    .build();
            expected = memberJson(next);
        } catch (FencedMemberEpochException e) {
            expected = null;
            error = "FencedMemberEpochException";
        }

        Map<String, Object> input = new LinkedHashMap<>();
        input.put("member", memberJson(member));
        Map<String, Object> meta = new TreeMap<>();
        ids.forEach((n, u) -> {
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("topic_id", sid(u));
            t.put("partitions", counts.get(n));
            meta.put(n, t);
        });
        input.put("metadata_topics", meta);
        input.put("has_subscription_changed", subscriptionChanged);
        if (regexTopics != null) input.put("resolved_regular_expressions", Map.of(regex, regexTopics));
        input.put("target_assignment_epoch", targetEpoch);
        input.put("target_assignment", sets(target));
        Map<String, Object> pe = new LinkedHashMap<>();
        pe.put("default", defaultEpoch);
        Map<String, Object> bp = new TreeMap<>();
        byPartition.forEach((u, m) -> {
            Map<String, Integer> s = new TreeMap<>();
            m.forEach((p, e) -> s.put(String.valueOf(p), e));
            bp.put(sid(u), s);
        });
        pe.put("by_partition", bp);
        input.put("partition_epochs", pe);
        if (owned == null) {
            input.put("owned_topic_partitions", "absent");
        } else {
            List<Object> o = new ArrayList<>();
            for (ConsumerGroupHeartbeatRequestData.TopicPartitions tp : owned) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("topic", sid(tp.topicId()));
                x.put("partitions", tp.partitions());
                o.add(x);
            }
            input.put("owned_topic_partitions", o);
        }
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("id", id);
        c.put("input", input);
        if (error != null) c.put("expected_error", error);
        else c.put("expected", expected);
        return c;
    }

    /** Written topic ids: the Uuid's short name (T0, T1, ... in draw order; the result does not depend on id values). */
    static final Map<Uuid, String> SHORT = new HashMap<>();

    static String sid(Uuid u) {
        return SHORT.computeIfAbsent(u, k -> "T" + SHORT.size());
    }

    static Map<String, Object> sets(Map<Uuid, java.util.Set<Integer>> m) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((u, ps) -> {
            if (!ps.isEmpty()) out.put(sid(u), new TreeSet<>(ps));
        });
        return out;
    }

    static Map<String, Object> epochs(Map<Uuid, Map<Integer, Integer>> m) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((u, ps) -> {
            if (ps.isEmpty()) return;
            Map<String, Integer> e = new TreeMap<>();
            ps.forEach((p, ep) -> e.put(String.valueOf(p), ep));
            out.put(sid(u), e);
        });
        return out;
    }

    static Map<String, Object> memberJson(ConsumerGroupMember m) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("state", m.state().name());
        j.put("member_epoch", m.memberEpoch());
        j.put("previous_member_epoch", m.previousMemberEpoch());
        j.put("subscribed_topic_names", new TreeSet<>(m.subscribedTopicNames()));
        if (m.subscribedTopicRegex() != null && !m.subscribedTopicRegex().isEmpty()) j.put("subscribed_topic_regex", m.subscribedTopicRegex());
        Map<Uuid, java.util.Set<Integer>> a = new HashMap<>();
        m.assignedPartitions().forEach((u, ps) -> a.put(u, ps.keySet()));
        Map<Uuid, java.util.Set<Integer>> p = new HashMap<>();
        m.partitionsPendingRevocation().forEach((u, ps) -> p.put(u, ps.keySet()));
        j.put("assigned", sets(a));
        j.put("assigned_epochs", epochs(m.assignedPartitions()));
        j.put("pending_revocation", sets(p));
        j.put("pending_revocation_epochs", epochs(m.partitionsPendingRevocation()));
        return j;
    }
}
