# max_pool2d with ceil_mode and with return_indices (argmax per window as tinygrad counts it), composed as tinygrad's pools
from tinygrad import Tensor, dtypes
x = Tensor([float((i * 7) % 11 - 5) for i in range(50)]).reshape(1, 2, 5, 5).realize()
mc = (x * -1).max_pool2d(kernel_size=(2, 2), ceil_mode=True)
m, idx = (x * -1).max_pool2d(kernel_size=(2, 2), stride=1, return_indices=True)
m3, idx3 = x.max_pool2d(kernel_size=(3, 3), stride=2, dilation=1, return_indices=True)
RESULT = {"max_ceil": mc.tolist(), "max": m.tolist(), "idx": idx.tolist(), "max3": m3.tolist(), "idx3": idx3.tolist()}
print(RESULT)
