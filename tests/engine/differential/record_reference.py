# Records the reference's outcomes of the fuzzer's programs: runs fuzz_variants.py MODE on tinygrad, a few programs
# per process, and a program alone when its process dies (the reference's CPU kernels trap on an integer division by
# zero: SIGFPE); such a program's line says {"crash": SIGNAL}.
#   ts_fuzz --python-defs 1 1000 > defs.py
#   python3 record_reference.py TINYGRAD_CHECKOUT defs.py print EVERY > reference_outcomes.txt   (every EVERY-th seed)
#   python3 record_reference.py TINYGRAD_CHECKOUT defs.py jit 1 > reference_jit.txt               (FAIL lines of its TinyJit)
import os, re, subprocess, sys, tempfile

ref, defs, mode, every = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
driver = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_variants.py")
blocks = re.split(r"(?m)^(?=def p\d+\()", open(defs).read())
blocks = [b for b in blocks if b.startswith("def p") and int(re.match(r"def p(\d+)", b).group(1)) % every == 0]
env = dict(os.environ, PYTHONPATH=ref, DEV=os.environ.get("DEV", "CPU"), DEBUG="0")

def run(chunk):
  with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
    f.write("".join(chunk))
  try:
    p = subprocess.run([sys.executable, driver, f.name, mode], capture_output=True, text=True, env=env, timeout=1200)
    return p.returncode, [l for l in p.stdout.splitlines() if not l.startswith("variants:")]
  finally:
    os.unlink(f.name)

for i in range(0, len(blocks), 10):
  chunk = blocks[i:i + 10]
  rc, lines = run(chunk)
  if rc < 0:  # a signal: each program alone
    lines = []
    for b in chunk:
      rc1, l1 = run([b])
      seed = re.match(r"def p(\d+)", b).group(1)
      lines += l1 if rc1 >= 0 else ([f'{seed} {{"crash": {-rc1}}}'] if mode == "print" else [f"CRASH seed {seed}: signal {-rc1}"])
  for l in lines: print(l, flush=True)
