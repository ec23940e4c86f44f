# full with an int, ones_like, zeros_like and a chain on them
from tinygrad import Tensor
f = Tensor.full((2, 3), 7)
o = Tensor.ones_like(f)
RESULT = {"f": (f + o).tolist(), "z": Tensor.zeros_like(f).tolist(), "dt": str(f.dtype)}
print(RESULT)
