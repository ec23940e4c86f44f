// The CPU JIT. This is the only translation unit of the project that includes LLVM or clang headers
// (each such TU costs ~30 s and ~0.8 GB to build). Never include Qt here (its `emit` macro breaks ORC).
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/compiler_hook.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendOptions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CodeGen.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace ts::cpu {
namespace {

constexpr const char* kCFileName = "kernel.c";
constexpr const char* kIrFileName = "kernel.ll";

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string take_message(llvm::Error err) { return llvm::toString(std::move(err)); }

// Process-wide state, built once under std::call_once and immutable afterwards (the LLJIT itself is
// internally synchronised).
// the calling thread's TargetMachine for optimisation pipelines (reused: creating one is not free)
llvm::TargetMachine& thread_target_machine(llvm::orc::JITTargetMachineBuilder& jtmb) {
  thread_local std::unique_ptr<llvm::TargetMachine> tm;
  if (!tm) {
    auto made = jtmb.createTargetMachine();
    if (!made) fail("cpu_jit: cannot create a target machine: " + take_message(made.takeError()));
    tm = std::move(*made);
  }
  return *tm;
}

// One front end at a time (compile_module: clang, or the IR parser, and the IR pipeline; assembly whole): C compiled on
// several threads at once corrupted the heap now and then (4 threads compiling 5 kernels each, two such processes on
// 2 cores: 8 of 240 runs aborted in malloc). With compile_module serialized: none of 720; with only clang's
// ExecuteAction serialized: 2 of 160 (so the compiler instance's making or unmaking is part of it); with only the code
// generator serialized: 1 of 240. The code generator and loading objects into the JIT stay concurrent.
std::mutex& frontend_mutex() {
  static std::mutex m;
  return m;
}

std::shared_mutex& misched_mutex() {
  static std::shared_mutex m;
  return m;
}
bool huge_block(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    for (const llvm::BasicBlock& b : f)
      if (b.size() > 20000) return true;
  return false;
}

struct Jit {
  std::string triple;
  std::string cpu;                    // "x86-64" when LLVM does not know the host CPU (e.g. Zen 5 on LLVM 16)
  std::vector<std::string> features;  // "+avx2", ... (enabled host features only), sorted
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple()};
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  // cc1 arguments, parsed once into a template invocation that every C compile copies.
  std::vector<std::string> cc1_args;
  std::unique_ptr<clang::CompilerInvocation> base_invocation;
  std::atomic<uint64_t> next_dylib{0};
};

Jit* g_jit = nullptr;
// JIT session errors (e.g. "Symbols not found: [ foo ]") are reported through the ExecutionSession's
// error reporter, on the thread that ran the materialisation: with the in-place dispatcher that is the
// thread whose compile() asked for the symbol (each compile has its own JITDylib). Collect them here
// for the exception text instead of the default reporter, which prints to stderr.
thread_local std::string t_session_errors;
std::once_flag g_once;
std::string g_init_error;

void init_jit() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  // X86's domain reassignment (GPR -> AVX-512 mask registers) is quadratic in a basic block's length: a kernel of
  // 16,000 chained index operations spent 93% of 20 s there. What it saves is a register move now and then.
  if (auto* o = llvm::cl::getRegisteredOptions().lookup("disable-x86-domain-reassignment"))
    o->addOccurrence(0, "disable-x86-domain-reassignment", "true");

  auto jit = std::make_unique<Jit>();

  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    g_init_error = "cpu_jit: cannot detect the host target: " + take_message(jtmb.takeError());
    return;
  }
  // detectHost() already carries every host feature (+ and -); only the CPU name may need fixing.
  std::string cpu = jtmb->getCPU();
  if (cpu.empty() || cpu == "generic") {
    cpu = "x86-64";
    jtmb->setCPU(cpu);
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Default);  // -O2 codegen
  jtmb->getOptions().MCOptions.AsmVerbose = true;       // only matters for assembly()

  // AVX512-BF16 stays off: LLVM 16's SLP vectorizer recurses without end costing a vector of bfloat loads/stores when
  // the target has it (a kernel copying four bf16 lanes crashed the process by stack overflow), and the kernels
  // compute bfloat16 in float32 anyway (no bf16 dot products are emitted). Off for the clang front end and the backend.
  const char* kOff[] = {"avx512bf16"};
  llvm::StringMap<bool> host_features;
  llvm::sys::getHostCPUFeatures(host_features);
  for (const auto& f : host_features)
    if (f.second && std::find(std::begin(kOff), std::end(kOff), f.first()) == std::end(kOff)) jit->features.push_back("+" + f.first().str());
  for (const char* f : kOff) {
    jit->features.push_back(std::string("-") + f);
    jtmb->getFeatures().AddFeature(f, false);
  }
  std::sort(jit->features.begin(), jit->features.end());

  jit->triple = jtmb->getTargetTriple().str();
  jit->cpu = cpu;
  jit->jtmb = *jtmb;

  // Modules are compiled to object code by compile_object (the IRCompileLayer is not used), then linked by the LLJIT's
  // object layer.
  auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!built) {
    g_init_error = "cpu_jit: cannot create the LLJIT: " + take_message(built.takeError());
    return;
  }
  jit->lljit = std::move(*built);
  jit->lljit->getExecutionSession().setErrorReporter([](llvm::Error err) {
    if (!t_session_errors.empty()) t_session_errors += "\n";
    t_session_errors += llvm::toString(std::move(err));
  });
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit->lljit->getDataLayout().getGlobalPrefix());
  if (!gen) {
    g_init_error = "cpu_jit: cannot search the process for symbols: " + take_message(gen.takeError());
    return;
  }
  jit->lljit->getMainJITDylib().addGenerator(std::move(*gen));

  // cc1 (not driver) arguments. Notes:
  //  - no -fmath-errno: cc1 defaults to errno-free math, so __builtin_sqrtf etc. become llvm intrinsics
  //    (sqrt lowers to an instruction; exp/log/... become calls to expf/logf resolved from the process).
  //  - no -ffast-math / -menable-no-infs / -menable-no-nans / -fno-signed-zeros: plain IEEE semantics.
  //  - -ffp-contract=on (clang's default, which the reference's CPU compiles with): a*b+c within one expression may
  //    become one fma; a source that must match an unfused evaluation says `#pragma clang fp contract(off)` (the C
  //    renderer does under FP_CONTRACT=0).
  //  - -fwrapv: signed int arithmetic wraps (as the LLVM IR renderer's plain add/mul and the interpreter), so clang
  //    does not fold e.g. -x < -5 into x > 5, which differs at INT_MIN.
  //  - -vectorize-loops / -vectorize-slp: what the clang driver adds at -O2 (cc1 leaves them off).
  auto& a = jit->cc1_args;
  a = {"-triple", jit->triple, "-target-cpu", cpu};
  for (const auto& f : jit->features) {
    a.push_back("-target-feature");
    a.push_back(f);
  }
  for (const char* s : {"-O2", "-ffreestanding", "-ffp-contract=on", "-fwrapv", "-vectorize-loops", "-vectorize-slp",
                        "-nostdsysteminc", "-nobuiltininc", "-discard-value-names", "-fno-common",
                        "-x", "c", "-std=gnu11"})
    a.emplace_back(s);
  //  - -mprefer-vector-width=512 where the machine has AVX-512: clang's default for these CPUs is 256-bit vectors,
  //    which halves a 16-wide tile into two ymm halves and spills a matmul's accumulators (a 16x8 tile's inner loop:
  //    8 zmm fmas, no spills, against 16 ymm fmas and 20 spills)
  if (std::find(jit->features.begin(), jit->features.end(), "+avx512f") != jit->features.end()) a.emplace_back("-mprefer-vector-width=512");

  std::vector<const char*> argv;
  for (const auto& s : a) argv.push_back(s.c_str());
  std::string diag_text;
  llvm::raw_string_ostream diag_os(diag_text);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_opts(new clang::DiagnosticOptions());
  auto* printer = new clang::TextDiagnosticPrinter(diag_os, diag_opts.get());
  clang::DiagnosticsEngine diags(llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs>(new clang::DiagnosticIDs()),
                                 diag_opts, printer, /*ShouldOwnClient=*/true);
  jit->base_invocation = std::make_unique<clang::CompilerInvocation>();
  bool ok = clang::CompilerInvocation::CreateFromArgs(*jit->base_invocation, argv, diags);
  diag_os.flush();
  if (!ok || diags.hasErrorOccurred()) {
    g_init_error = "cpu_jit: clang rejected the cc1 arguments:\n" + diag_text;
    return;
  }
  g_jit = jit.release();  // lives for the whole process: returned code pointers must stay valid
}

Jit& jit() {
  std::call_once(g_once, init_jit);
  if (!g_jit) fail(g_init_error);
  return *g_jit;
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(Jit& j) {
  auto tm = j.jtmb.createTargetMachine();
  if (!tm) fail("cpu_jit: cannot create a target machine: " + take_message(tm.takeError()));
  return std::move(*tm);
}

// C99 text -> optimised (O2) module in `ctx`, via clang's library in-process.
std::unique_ptr<llvm::Module> compile_c(Jit& j, const std::string& source, llvm::LLVMContext& ctx) {
  auto inv = std::make_shared<clang::CompilerInvocation>(*j.base_invocation);
  auto& fe = inv->getFrontendOpts();
  fe.Inputs.clear();
  fe.Inputs.emplace_back(kCFileName, clang::InputKind(clang::Language::C));
  fe.DisableFree = false;
  auto& pp = inv->getPreprocessorOpts();
  pp.RetainRemappedFileBuffers = false;  // the preprocessor frees the buffer
  pp.addRemappedFile(kCFileName, llvm::MemoryBuffer::getMemBufferCopy(source, kCFileName).release());

  std::string diag_text;
  llvm::raw_string_ostream diag_os(diag_text);
  clang::CompilerInstance ci;
  ci.setInvocation(std::move(inv));
  ci.createDiagnostics(new clang::TextDiagnosticPrinter(diag_os, &ci.getDiagnosticOpts()),
                       /*ShouldOwnClient=*/true);
  ci.setVerboseOutputStream(diag_os);  // "N errors generated." goes here, not to stderr

  clang::EmitLLVMOnlyAction action(&ctx);
  const bool ok = ci.ExecuteAction(action);
  std::unique_ptr<llvm::Module> m = action.takeModule();
  diag_os.flush();
  if (!ok || !m || ci.getDiagnostics().hasErrorOccurred())
    fail("C compile failed:\n" + (diag_text.empty() ? std::string("(no diagnostics)") : diag_text));
  return m;
}

// LLVM IR text -> verified, O2-optimised module in `ctx`, with the JIT's triple and data layout.
std::unique_ptr<llvm::Module> compile_ir(Jit& j, const std::string& source, llvm::LLVMContext& ctx) {
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> m =
      llvm::parseIR(llvm::MemoryBufferRef(source, kIrFileName), err, ctx);
  if (!m) {
    std::string text;
    llvm::raw_string_ostream os(text);
    err.print(kIrFileName, os, /*ShowColors=*/false);
    os.flush();
    fail("LLVM IR parse failed:\n" + text);
  }
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (llvm::verifyModule(*m, &os)) {
      os.flush();
      fail("LLVM IR verification failed:\n" + text);
    }
  }
  llvm::TargetMachine* tm = &thread_target_machine(j.jtmb);
  m->setTargetTriple(j.triple);
  m->setDataLayout(tm->createDataLayout());
  // the attributes clang gives the C renderer's functions: the CPU, its features and, with AVX-512, 512-bit vectors
  // preferred (the vectorizers cost for the function's own subtarget)
  std::string features;
  for (const auto& f : j.features) features += (features.empty() ? "" : ",") + f;
  const bool avx512 = std::find(j.features.begin(), j.features.end(), "+avx512f") != j.features.end();
  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", j.cpu);
    f.addFnAttr("target-features", features);
    if (avx512) f.addFnAttr("prefer-vector-width", "512");
  }

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;  // as clang -O2
  pto.SLPVectorization = true;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(*m, mam);
  return m;
}

std::unique_ptr<llvm::Module> compile_module(Jit& j, SourceKind kind, const std::string& source,
                                             llvm::LLVMContext& ctx) {
  return kind == SourceKind::C ? compile_c(j, source, ctx) : compile_ir(j, source, ctx);
}

// Optimised module -> object code (a relocatable ELF object) with the calling thread's TargetMachine.
std::string object_code(Jit& j, llvm::Module& m) {
  auto emit = [&] {
    auto out = llvm::orc::SimpleCompiler(thread_target_machine(j.jtmb))(m);
    if (!out) fail("cpu_jit: code generation failed: " + take_message(out.takeError()));
    return std::string((*out)->getBufferStart(), (*out)->getBufferSize());
  };
  if (!huge_block(m)) {
    std::shared_lock lock(misched_mutex());
    return emit();
  }
  // The machine scheduler's dependence graph is quadratic in a block's length (addPhysRegDeps): a kernel of
  // 16,000 chained index operations (96,000 instructions once its loops unroll) took 73 s with it and 4 s
  // without. It is a process-wide option, so such a module is compiled while no other is.
  std::unique_lock lock(misched_mutex());
  struct Misched {
    llvm::cl::Option* o = llvm::cl::getRegisteredOptions().lookup("enable-misched");
    Misched() { if (o) o->addOccurrence(0, "enable-misched", "false"); }
    ~Misched() { if (o) o->addOccurrence(0, "enable-misched", "true"); }
  } off;
  return emit();
}

}  // namespace

std::string compile_object(SourceKind kind, const std::string& source) {
  Jit& j = jit();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m;
  {
    const auto asked = std::chrono::steady_clock::now();
    std::lock_guard serial(frontend_mutex());
    compile_wait_seconds() += std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    m = compile_module(j, kind, source, ctx);
  }
  const llvm::DataLayout& dl = j.lljit->getDataLayout();
  if (m->getDataLayout().isDefault()) m->setDataLayout(dl);
  if (m->getDataLayout() != dl)
    fail("cpu_jit: module data layout '" + m->getDataLayout().getStringRepresentation() +
         "' differs from the JIT's '" + dl.getStringRepresentation() + "'");
  if (m->getTargetTriple().empty()) m->setTargetTriple(j.triple);
  return object_code(j, *m);
}

void* load_object(const std::string& object, const std::string& symbol) {
  Jit& j = jit();
  // A fresh JITDylib per object: the same symbol name may be defined by many sources. It links against the main
  // JITDylib, which resolves process symbols (memset, expf, __truncsfhf2, ...).
  auto& es = j.lljit->getExecutionSession();
  const std::string name = "ts_kernel_" + std::to_string(j.next_dylib.fetch_add(1));
  auto jd = j.lljit->createJITDylib(name);
  if (!jd) fail("cpu_jit: cannot create a JITDylib: " + take_message(jd.takeError()));
  jd->addToLinkOrder(j.lljit->getMainJITDylib());

  t_session_errors.clear();
  auto cleanup = [&](std::string msg) -> void {
    if (!t_session_errors.empty()) msg += "\n" + t_session_errors;
    t_session_errors.clear();
    llvm::consumeError(es.removeJITDylib(*jd));
    fail(msg);
  };
  if (auto err = j.lljit->addObjectFile(*jd, llvm::MemoryBuffer::getMemBufferCopy(object, name)))
    cleanup("cpu_jit: cannot add the object: " + take_message(std::move(err)));
  auto addr = j.lljit->lookup(*jd, symbol);
  if (!addr) cleanup("cpu_jit: cannot materialise '" + symbol + "': " + take_message(addr.takeError()));
  return addr->toPtr<void*>();
}

void* compile(SourceKind kind, const std::string& source, const std::string& symbol) {
  return load_object(compile_object(kind, source), symbol);
}

std::string object_key() {
  Jit& j = jit();
  // What the object code depends on besides the source. The passes and options below are those of compile_ir and
  // object_code (and init_jit's process-wide options): a change there must change this text.
  std::string key = "LLVM " LLVM_VERSION_STRING "\ntriple " + j.triple + "\ncpu " + j.cpu + "\nfeatures";
  for (const auto& f : j.features) key += " " + f;
  key += "\nclang cc1";
  for (const auto& a : j.cc1_args) key += " " + a;
  key += "\nllvm ir: the cpu and features as function attributes, 512-bit vectors preferred with avx512f, O2 pipeline, loop and SLP vectorization"
         "\ncodegen: O2, x86 domain reassignment off, machine scheduler off for blocks over 20000 instructions";
  return key;
}

std::string assembly(SourceKind kind, const std::string& source) {
  Jit& j = jit();
  std::lock_guard serial(frontend_mutex());
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = compile_module(j, kind, source, ctx);
  auto tm = make_target_machine(j);
  m->setDataLayout(tm->createDataLayout());
  if (m->getTargetTriple().empty()) m->setTargetTriple(j.triple);

  llvm::SmallString<4096> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::CGFT_AssemblyFile))
    fail("cpu_jit: the target cannot emit assembly");
  pm.run(*m);
  return std::string(buf.str());
}

std::string target_description() {
  Jit& j = jit();
  std::string s = j.cpu;
  for (const auto& f : j.features) s += " " + f;
  return s;
}

}  // namespace ts::cpu
