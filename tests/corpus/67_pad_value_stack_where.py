# pad with a value and stack of small vectors (masked axes get upcast)
from tinygrad import Tensor
a = Tensor([1.0, 2.0, 3.0]).realize()
b = Tensor([4.0, 5.0, 6.0]).realize()
RESULT = {"padv": a.pad(((2, 1),), value=-1.0).tolist(), "stack": Tensor.stack(a, b, a + b).tolist()}
print(RESULT)
