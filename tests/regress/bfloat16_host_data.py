# bfloat16 tensors made from python values hold them (once zeros: the host buffer wrote no bf16); the values by
# hand: float32 rounded to nearest even in its upper half (the reference cannot compile bf16 on this CPU target)
from tinygrad import Tensor, dtypes
t = Tensor([1.5, -2.25, 1.0 / 3, 1e10, 0.0], dtype=dtypes.bfloat16)
print(t.tolist())
print((t * 2).tolist())
