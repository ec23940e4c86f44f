# cat and stack of realized tensors
from tinygrad import Tensor
a = Tensor([[1.0, 2.0], [3.0, 4.0]]).realize()
b = Tensor([[5.0, 6.0]]).realize()
RESULT = {"cat0": a.cat(b, dim=0).tolist(), "stack": Tensor.stack(a, a * 2, dim=1).tolist()}
print(RESULT)
