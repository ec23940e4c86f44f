# devices: CPU INTERP VULKAN
# a program over two memories: tensors moved to the Vulkan device and back, device= arguments, kernels on each
# side; an op over both is an error that names the two devices
from tinygrad import Tensor, dtypes
a = Tensor([1.0, 2.0, 3.0, 4.0], device="CPU")
g = a.to("VULKAN")
print(g.device, (g * 2 + 1).tolist())
h = Tensor([10.0, 20.0, 30.0, 40.0], device="vulkan")
s = (g + h).sum()
print(h.device, s.item())
back = (g * h).to("CPU")
print(back.device, (back + a).tolist())
i = Tensor([3, 1, 0], dtype=dtypes.int32, device="VULKAN")
print(h[i].tolist(), (i.cast(dtypes.float32) @ Tensor.ones(3, 2, device="VULKAN")).tolist())
try:
  print((back + g).tolist())
except Exception as e:
  print("operands on CPU and VULKAN" in str(e))
