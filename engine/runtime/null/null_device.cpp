// The NULL backend (the reference's DEV=NULL): kernels are scheduled, optimized and rendered as C as for any device,
// and nothing runs. Its memory holds nothing (a copy in is dropped, a copy out is an error), a launch does nothing and
// takes 1 ms, as the reference's. For seeing what a program would compile to, and for tests that only build graphs.
// NULL_ALLOW_COPYOUT=1 (the reference's variable, read when the device is made) lets a copy out leave its destination
// as it was instead, as the reference's tests run on NULL: every value then reads back as whatever the host had there.
#include <cstdlib>
#include <cstring>

#include "engine/device/device.h"
#include "engine/renderer/c_renderer.h"
#include "engine/uop/error.h"

namespace ts {

namespace {

// the reference's NullRenderer: the C-style renderer on a target without locals or threads
class NullRenderer final : public Renderer {
 public:
  std::string name() const override { return "NULL"; }
  std::string lang() const override { return "c"; }
  // the C renderer's schemes, as steps of the trace (the source is the CPU's C)
  UOpRef linear_passes(const UOpRef& linear, const OptTarget& target) const override { return clang_renderer().linear_passes(linear, target); }
  bool decomposes_transcendentals() const override { return true; }
  void render(ProgramSpec& spec) const override { spec.src = render_c(spec, &spec.source_lines); }
};

class NullDevice final : public Device {
 public:
  NullDevice(std::string name, bool allow_copyout) : Device(std::move(name)), allow_copyout_(allow_copyout) {}
  std::string memory() const override { return name(); }
  const Renderer& renderer() const override {
    static const NullRenderer r;
    return r;
  }
  OptTarget opt_target() const override {
    OptTarget t = cpu_opt_target();
    t.has_threads = false;
    t.global_max = {0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
    return t;
  }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    return {{"compiler", "none: kernels are rendered, nothing runs (each launch takes 1 ms, a copy out is an error)"}};
  }
  std::shared_ptr<Buffer> allocate(DType dt, int64_t size) override {
    auto b = std::make_shared<Buffer>();
    b->device = name();
    b->dtype = dt;
    b->size = size;
    return b;
  }
  void copy_in(Buffer&, const void*, size_t) override {}
  void copy_out(void*, const Buffer&, size_t) override {
    if (!allow_copyout_) throw Error("no copyout on NULL");
  }
  std::shared_ptr<Executable> load(const ProgramSpec&) override { return std::make_shared<Executable>(); }
  double launch(const ProgramSpec&, Executable&, std::span<Buffer* const>, std::span<const int64_t>) override { return 1e-3; }
  std::string graph_name() const override { return "NullGraph"; }

 private:
  bool allow_copyout_;
};

}  // namespace

void register_null_devices() {
  const char* allow = std::getenv("NULL_ALLOW_COPYOUT");
  register_device(std::make_unique<NullDevice>("NULL", allow && std::strcmp(allow, "0") != 0 && *allow));
}

}  // namespace ts
