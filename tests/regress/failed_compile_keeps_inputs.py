# devices: VULKAN
# A realize whose kernel cannot compile (GLSL has no float64 pow) fails before its tensors become buffers: the
# inputs it would have uploaded keep their values (they once read back as zeros: the copy never ran, the tensors
# already pointed at its buffer), and the next realize computes them. Values by hand.
from tinygrad import Tensor, dtypes
x = Tensor([0.5, 1.0, 2.5], dtype=dtypes.float64)
y = Tensor([2.0, 3.0, 0.5], dtype=dtypes.float64)
try: print(x.pow(y).tolist())
except Exception as e: print(type(e).__name__)
print(x.tolist(), y.tolist())
print((x * y).tolist())
