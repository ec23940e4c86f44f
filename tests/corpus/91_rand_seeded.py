# Tensor.manual_seed + Tensor.rand: threefry counters per device; two draws advance the counter; reseeding repeats
from tinygrad import Tensor
Tensor.manual_seed(42)
a = Tensor.rand(3, 4)
b = Tensor.rand(5)
RESULT = {"a": a.tolist(), "b": b.tolist()}
Tensor.manual_seed(42)
RESULT["a_again"] = Tensor.rand(3, 4).tolist()
print(RESULT)
