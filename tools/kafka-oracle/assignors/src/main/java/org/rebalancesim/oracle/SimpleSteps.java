package org.rebalancesim.oracle;

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.assignor.SimpleHomogeneousAssignmentBuilder;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.SubscribedTopicDescriberImpl;
import org.apache.kafka.server.common.TopicIdPartition;

/**
 * A debugging aid, not part of the generator: runs Kafka 4.4.0's own
 * SimpleHomogeneousAssignmentBuilder on one homogeneous case of a share-assignor vector file,
 * one step at a time (its private steps, called through reflection), and prints its tables in
 * Java's iteration order after each step: finalAssignmentByPartition, finalAssignmentByMember,
 * the unfilled and overfilled member sets. The group spec is built as ServerCases builds it.
 *
 *   java -cp "target/classes:target/lib/*" org.rebalancesim.oracle.SimpleSteps FILE CASE_ID
 */
public final class SimpleSteps {
    private SimpleSteps() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: SimpleSteps VECTOR_FILE CASE_ID");
            System.exit(2);
        }
        JsonNode c = null;
        for (JsonNode x : new ObjectMapper().readTree(new File(args[0])).get("cases")) {
            if (x.get("id").asText().equals(args[1])) c = x;
        }
        if (c == null) {
            System.err.println(args[0] + ": no case " + args[1]);
            System.exit(2);
        }
        ServerCases.Group g = group(c);
        ServerCases.Spec s = ServerCases.spec(g);
        if (s.type != org.apache.kafka.coordinator.group.api.assignor.SubscriptionType.HOMOGENEOUS) {
            System.err.println(args[0] + ": case " + args[1] + " is not homogeneous");
            System.exit(2);
        }
        Optional<Map<Uuid, Set<Integer>>> assignable = Optional.empty();
        if (g.assignable != null) {
            Map<Uuid, Set<Integer>> a = new HashMap<>();
            g.assignable.forEach((t, ps) -> a.put(g.ids.get(t), ps));
            assignable = Optional.of(a);
        }
        GroupSpecImpl spec = new GroupSpecImpl(s.members, s.type, Map.of(), assignable);
        Map<Uuid, String> names = new HashMap<>();
        g.ids.forEach((n, id) -> names.put(id, n));

        SimpleHomogeneousAssignmentBuilder b =
            new SimpleHomogeneousAssignmentBuilder(spec, new SubscribedTopicDescriberImpl(s.image));
        System.out.println("members (index order): " + s.order);
        List<TopicIdPartition> targets = get(b, "targetPartitions");
        StringBuilder line = new StringBuilder("targetPartitions:");
        for (TopicIdPartition tp : targets) {
            line.append(' ').append(name(names, tp)).append(" (hash ").append(tp.hashCode()).append(')');
        }
        System.out.println(line);
        System.out.println("desiredSharing: " + get(b, "desiredSharing")
            + ", desiredAssignmentCount: " + Arrays.toString((int[]) get(b, "desiredAssignmentCount")));
        for (String step : List.of("revokeUnassignablePartitions", "revokeOverfilledMembers", "revokeOversharedPartitions")) {
            call(b, step);
            print(b, step, names);
        }
        // build() adds every target partition with computeIfAbsent before the last step.
        Map<TopicIdPartition, Set<Integer>> byPartition = get(b, "finalAssignmentByPartition");
        targets.forEach(tp -> byPartition.computeIfAbsent(tp, k -> new HashSet<>()));
        print(b, "targets added", names);
        call(b, "assignRemainingPartitions");
        print(b, "assignRemainingPartitions", names);
    }

    static ServerCases.Group group(JsonNode c) {
        ServerCases.Group g = new ServerCases.Group();
        c.get("topics").fields().forEachRemaining(e -> g.topics.put(e.getKey(), e.getValue().asInt()));
        c.get("topic_ids").fields().forEachRemaining(e -> g.ids.put(e.getKey(), Uuid.fromString(e.getValue().asText())));
        if (c.has("assignable_partitions")) {
            g.assignable = new TreeMap<>();
            c.get("assignable_partitions").fields().forEachRemaining(e -> {
                Set<Integer> ps = new TreeSet<>();
                e.getValue().forEach(p -> ps.add(p.asInt()));
                g.assignable.put(e.getKey(), ps);
            });
        }
        for (JsonNode m : c.get("members")) {
            ServerCases.Member member = new ServerCases.Member();
            member.id = m.get("id").asText();
            m.get("subscriptions").forEach(t -> member.topics.add(t.asText()));
            if (m.has("assigned")) {
                for (JsonNode p : m.get("assigned")) {
                    member.assigned.computeIfAbsent(p.get(0).asText(), k -> new ArrayList<>()).add(p.get(1).asInt());
                }
            }
            g.members.add(member);
        }
        return g;
    }

    static String name(Map<Uuid, String> names, TopicIdPartition tp) {
        return names.get(tp.topicId()) + ":" + tp.partitionId();
    }

    static void print(Object b, String step, Map<Uuid, String> names) throws Exception {
        System.out.println("after " + step + ":");
        Map<TopicIdPartition, Set<Integer>> byPartition = get(b, "finalAssignmentByPartition");
        StringBuilder line = new StringBuilder("  finalAssignmentByPartition:");
        byPartition.forEach((tp, members) -> line.append(' ').append(name(names, tp)).append(members));
        System.out.println(line);
        Map<Integer, Set<TopicIdPartition>> byMember = get(b, "finalAssignmentByMember");
        StringBuilder members = new StringBuilder("  finalAssignmentByMember:");
        byMember.forEach((m, tps) -> {
            List<String> held = new ArrayList<>();
            tps.forEach(tp -> held.add(name(names, tp)));
            members.append(' ').append(m).append(held);
        });
        System.out.println(members);
        System.out.println("  unfilledMembers: " + get(b, "unfilledMembers") + ", overfilledMembers: " + get(b, "overfilledMembers"));
    }

    @SuppressWarnings("unchecked")
    static <T> T get(Object o, String field) throws Exception {
        Field f = o.getClass().getDeclaredField(field);
        f.setAccessible(true);
        return (T) f.get(o);
    }

    static void call(Object o, String method) throws Exception {
        Method m = o.getClass().getDeclaredMethod(method);
        m.setAccessible(true);
        m.invoke(o);
    }
}
