#include "models/spec/fleet_spec.hpp"

namespace rsim {

HpaRules default_scale_up() {
  HpaRules r;
  r.select = SelectPolicy::Max;
  r.policies = {{true, 100, sim::ms(15000)}, {false, 4, sim::ms(15000)}};
  return r;
}

HpaRules default_scale_down() {
  HpaRules r;
  r.stabilization_window = sim::ms(300000);
  r.select = SelectPolicy::Max;
  r.policies = {{true, 100, sim::ms(15000)}};
  return r;
}

}  // namespace rsim
