package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns the lines of DumpLogSegments' --offsets-decoder output ({@code | offset: N CreateTime: T
 * ... key: {...} payload: {...}}) into the simulator's {@code record} trace events: Kafka's record
 * name, the value's fields in snake_case, partition lists as "topic-partition" strings, and the
 * scenario's name of each member (from the consumers' own member ids).
 */
final class OffsetsDecoder {
  private OffsetsDecoder() {}

  /** CoordinatorRecordType ids of the group coordinator's records. */
  private static final Map<Integer, String> NAMES = Map.ofEntries(
      Map.entry(0, "OffsetCommit"), Map.entry(1, "OffsetCommit"), Map.entry(2, "GroupMetadata"),
      Map.entry(3, "ConsumerGroupMetadata"), Map.entry(4, "ConsumerGroupPartitionMetadata"),
      Map.entry(5, "ConsumerGroupMemberMetadata"), Map.entry(6, "ConsumerGroupTargetAssignmentMetadata"),
      Map.entry(7, "ConsumerGroupTargetAssignmentMember"), Map.entry(8, "ConsumerGroupCurrentMemberAssignment"),
      Map.entry(9, "ShareGroupPartitionMetadata"), Map.entry(10, "ShareGroupMemberMetadata"),
      Map.entry(11, "ShareGroupMetadata"), Map.entry(12, "ShareGroupTargetAssignmentMetadata"),
      Map.entry(13, "ShareGroupTargetAssignmentMember"), Map.entry(14, "ShareGroupCurrentMemberAssignment"),
      Map.entry(15, "ShareGroupStatePartitionMetadata"), Map.entry(16, "ConsumerGroupRegularExpression"));

  private static final Set<String> TP_FIELDS =
      Set.of("assigned_partitions", "partitions_pending_revocation", "topic_partitions", "owned_partitions");

  static void parse(List<String> lines, int partition, Set<String> groups, long originWallMs,
      Map<String, String> topicNames, List<ObjectNode> trace, List<ObjectNode> out) throws IOException {
    Map<String, String> members = new TreeMap<>();
    Map<String, String> clients = new TreeMap<>();
    Map<String, String> byClient = new TreeMap<>();
    for (ObjectNode o : trace) {
      if (o.path("type").asText().equals("member.id") && !o.path("member_id").asText().isEmpty()) {
        members.put(o.path("member_id").asText(), o.path("consumer").asText());
      }
      // a share consumer cannot tell its member id (ShareConsumer has no groupMetadata()): its
      // consumer.start names its client.id, which its ShareGroupMemberMetadata record carries
      if (o.path("type").asText().equals("consumer.start") && o.has("client_id")) {
        byClient.put(o.path("client_id").asText(), o.path("consumer").asText());
      }
    }
    for (String line : lines) {
      if (!line.startsWith("| offset: ")) continue;
      int k = line.indexOf(" key: ");
      int v = line.indexOf(" payload: ");
      if (k < 0 || v < 0) continue;
      long offset = Long.parseLong(field(line, "offset: "));
      long createTime = Long.parseLong(field(line, "CreateTime: "));
      JsonNode key = tree(line.substring(k + 6, v));
      String payloadText = line.substring(v + 10).trim();
      JsonNode payload = payloadText.equals("null") || payloadText.isEmpty() ? null : tree(payloadText);
      if (key == null) continue;  // not a group coordinator record (the decoder prints "<...>")
      if (payload != null && !payload.isObject()) payload = null;
      int type = key.path("type").asInt(-1);
      JsonNode kd = key.path("data");
      String group = kd.has("group") ? kd.path("group").asText() : kd.path("groupId").asText();
      if (!groups.contains(group)) continue;
      ObjectNode r = Oracle.obj();
      r.put("t_us", (createTime - originWallMs) * 1000);
      r.put("type", "record");
      r.put("partition", partition);
      r.put("offset", offset);
      r.put("record", NAMES.getOrDefault(type, "Type" + type));
      r.put("tombstone", payload == null);
      r.put("group", group);
      if (kd.has("memberId")) {
        String m = kd.path("memberId").asText();
        if (type == 10 && payload != null && !members.containsKey(m)) {
          String name = byClient.get(payload.path("data").path("clientId").asText());
          if (name != null) members.put(m, name);
        }
        r.put("member_id", m);
        r.put("consumer", members.getOrDefault(m, m));
      }
      if (type == 0 || type == 1) {
        r.put("topic", kd.path("topic").asText());
        r.put("partition_index", kd.path("partition").asInt());
        if (payload != null) r.put("committed_offset", payload.path("data").path("offset").asLong());
      } else if (payload != null) {
        JsonNode d = payload.path("data");
        if (type == 2) {
          d.path("members").forEach(m -> {
            String id = m.path("memberId").asText();
            clients.put(id, m.path("clientId").asText());
          });
        }
        ObjectNode conv = (ObjectNode) convert(d, topicNames);
        if (type == 2) {
          String leader = d.path("leader").asText(null);
          if (leader != null) conv.put("leader", members.getOrDefault(leader, leader));
          for (JsonNode m : conv.path("members")) {
            String id = m.path("member_id").asText();
            ((ObjectNode) m).put("consumer", members.getOrDefault(id, id));
          }
        }
        r.setAll(conv);
      }
      out.add(r);
    }
  }

  private static JsonNode tree(String text) {
    try {
      JsonNode n = Oracle.JSON.readTree(text);
      return n != null && n.isObject() ? n : null;
    } catch (IOException e) {
      return null;
    }
  }

  private static String field(String line, String name) {
    int i = line.indexOf(name) + name.length();
    int j = line.indexOf(' ', i);
    return line.substring(i, j < 0 ? line.length() : j);
  }

  /** camelCase to snake_case, topic-partition lists to "topic-p" strings, recursively. */
  static JsonNode convert(JsonNode n, Map<String, String> topicNames) {
    if (n.isObject()) {
      ObjectNode o = Oracle.obj();
      for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        String name = snake(e.getKey());
        JsonNode v = e.getValue();
        if (v.isArray() && (isTopicPartitions(v) || TP_FIELDS.contains(name))) {
          o.set(renamed(name), partitions(v, topicNames));
        } else if (name.equals("subscription") && v.isObject() && v.has("topics")) {
          // classic member subscription: topics, owned partitions, generation, rack
          o.set("subscription", v.path("topics"));
          o.set("owned_partitions", partitions(v.path("ownedPartitions"), topicNames));
          o.put("generation_id", v.path("generationId").asInt());
          o.set("rack_id", v.path("rackId"));
        } else if (name.equals("assignment") && v.isObject() && v.has("assignedPartitions")) {
          o.set("assignment", partitions(v.path("assignedPartitions"), topicNames));
        } else {
          o.set(name, convert(v, topicNames));
        }
      }
      return o;
    }
    if (n.isArray()) {
      ArrayNode a = Oracle.JSON.createArrayNode();
      n.forEach(x -> a.add(convert(x, topicNames)));
      return a;
    }
    return n;
  }

  private static String renamed(String name) {
    switch (name) {
      case "assigned_partitions": return "assigned";
      case "partitions_pending_revocation": return "pending_revocation";
      case "topic_partitions": return "partitions";
      default: return name;
    }
  }

  private static boolean isTopicPartitions(JsonNode v) {
    if (!v.isArray() || v.isEmpty()) return false;
    JsonNode f = v.get(0);
    return f.isObject() && (f.has("topicId") || f.has("topic")) && f.has("partitions");
  }

  static ArrayNode partitions(JsonNode v, Map<String, String> topicNames) {
    ArrayNode a = Oracle.JSON.createArrayNode();
    if (!v.isArray()) return a;
    for (JsonNode tp : v) {
      String topic = tp.has("topic") ? tp.path("topic").asText() : topicNames.getOrDefault(tp.path("topicId").asText(), tp.path("topicId").asText());
      for (JsonNode p : tp.path("partitions")) a.add(topic + "-" + p.asInt());
    }
    return a;
  }

  static String snake(String camel) {
    StringBuilder sb = new StringBuilder();
    for (char c : camel.toCharArray()) {
      if (Character.isUpperCase(c)) sb.append('_').append(Character.toLowerCase(c));
      else sb.append(c);
    }
    return sb.toString();
  }
}
