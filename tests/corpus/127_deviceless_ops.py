# deviceless constants combined with a device tensor; full(buffer=False) style consts
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0]).realize()
c = Tensor(2.0)
RESULT = {"xc": (x * c + c).tolist(), "c": (c * 3).item(), "ar": (Tensor.arange(3) + x).tolist()}
print(RESULT)
