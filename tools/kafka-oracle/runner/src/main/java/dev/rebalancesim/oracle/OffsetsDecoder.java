package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;

/** Parses DumpLogSegments' --offsets-decoder output into the simulator's record events. */
final class OffsetsDecoder {
  private OffsetsDecoder() {}

  static void parse(List<String> lines, int partition, Set<String> groups, long originWallMs,
      List<ObjectNode> trace, List<ObjectNode> out) {
    // filled in below
  }
}
