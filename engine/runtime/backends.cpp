// The backends every build has, one line each, in the order `tinyscope devices` lists their devices. A backend is a
// folder of engine/runtime with its device class, its renderer hook-up and its runtime; it registers its devices here.
#include "engine/device/device.h"

namespace ts {

void register_cpu_devices();     // engine/runtime/cpu/cpu_device.cpp
void register_interp_devices();  // engine/runtime/interp/interp_device.cpp
void register_null_devices();    // engine/runtime/null/null_device.cpp

void register_host_devices() {
  register_cpu_devices();
  register_interp_devices();
  register_null_devices();
}

}  // namespace ts
