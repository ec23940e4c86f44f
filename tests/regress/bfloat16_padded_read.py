# a padded bfloat16 read: the pad's zero is a bfloat16 constant in the program (a C compile error once: clang has no
# cast from float to __bf16, the constant is its bits); the values by hand (the reference cannot compile bf16 on this
# CPU target)
from tinygrad import Tensor, dtypes
t = Tensor([1.5, -2.25, 4.0, 8.0], dtype=dtypes.bfloat16).contiguous().realize()
p = t.pad(((1, 2),))
print(p.tolist())
print(p.sum().tolist())
print(p.max().tolist())
