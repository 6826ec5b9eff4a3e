package dev.rebalancesim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Random;

/** A duration distribution of the scenario format (milliseconds), sampled with java.util.Random. */
final class Dist {
  private final String kind;
  private final double a;
  private final double b;
  private final double lo;
  private final double hi;

  private Dist(String kind, double a, double b, double lo, double hi) {
    this.kind = kind;
    this.a = a;
    this.b = b;
    this.lo = lo;
    this.hi = hi;
  }

  static final Dist ZERO = new Dist("constant", 0, 0, 0, Double.MAX_VALUE);

  static Dist of(JsonNode n) {
    if (n == null || n.isNull()) return ZERO;
    if (n.isNumber()) return new Dist("constant", n.asDouble(), 0, 0, Double.MAX_VALUE);
    String d = n.path("dist").asText();
    switch (d) {
      case "constant":
        return new Dist(d, n.path("value").asDouble(), 0, 0, Double.MAX_VALUE);
      case "uniform":
        return new Dist(d, n.path("min").asDouble(), n.path("max").asDouble(), 0, Double.MAX_VALUE);
      case "exponential":
        return new Dist(d, n.path("mean").asDouble(), 0, 0, Double.MAX_VALUE);
      case "normal":
        return new Dist(d, n.path("mean").asDouble(), n.path("stddev").asDouble(),
            n.path("min").asDouble(0), n.path("max").asDouble(Double.MAX_VALUE));
      case "lognormal":
        return new Dist(d, n.path("median").asDouble(), n.path("sigma").asDouble(), 0, Double.MAX_VALUE);
      default:
        throw new IllegalArgumentException("unknown distribution \"" + d + "\"");
    }
  }

  boolean isZero() {
    return kind.equals("constant") && a == 0;
  }

  /** One draw in milliseconds, never below zero. */
  double sample(Random r) {
    double v;
    switch (kind) {
      case "constant": v = a; break;
      case "uniform": v = a + (b - a) * r.nextDouble(); break;
      case "exponential": v = -a * Math.log(1 - r.nextDouble()); break;
      case "normal": v = Math.min(hi, Math.max(lo, a + b * r.nextGaussian())); break;
      case "lognormal": v = a * Math.exp(b * r.nextGaussian()); break;
      default: v = 0;
    }
    return Math.max(0, v);
  }
}
