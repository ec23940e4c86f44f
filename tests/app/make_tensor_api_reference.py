# Writes tensor_api_reference.json: every `::: tinygrad.Tensor.NAME` entry of tinygrad's docs/tensor/{creation,
# elementwise,movement,ops,properties}.md with its kind and the parameters of tinygrad's signature.
# Run with tinygrad importable:  PYTHONPATH=TINYGRAD python3 tests/app/make_tensor_api_reference.py TINYGRAD > tests/app/tensor_api_reference.json
# python_api.py checks tinyscope's Tensor against it.
import inspect, json, re, sys
from tinygrad import Tensor

root, entries = sys.argv[1], []
for doc in ("creation", "elementwise", "movement", "ops", "properties"):
  for line in open(f"{root}/docs/tensor/{doc}.md"):
    if not (m := re.match(r"^::: tinygrad\.Tensor\.(\w+)", line)): continue
    raw = inspect.getattr_static(Tensor, name := m.group(1))
    kind = "property" if isinstance(raw, property) else "classmethod" if isinstance(raw, classmethod) else \
           "staticmethod" if isinstance(raw, staticmethod) else "method"
    params = [] if kind == "property" else [[p.name, p.kind.name] for p in inspect.signature(getattr(Tensor, name)).parameters.values()
                                            if p.name not in ("self", "cls")]
    entries.append({"doc": doc, "name": name, "kind": kind, "params": params})
print("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]")
