# half tensors in arithmetic with float32 and a half reduce read as float
from tinygrad import Tensor, dtypes
h = Tensor([0.5, 1.5, 2.5, 3.5], dtype=dtypes.half).realize()
f = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
RESULT = {"hf": (h * f).tolist(), "dt": str((h * f).dtype), "hh": (h + h).tolist(), "hsum": h.sum().float().item()}
print(RESULT)
