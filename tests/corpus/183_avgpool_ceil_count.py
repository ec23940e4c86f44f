# avg_pool2d with ceil_mode and count_include_pad=False: window sums over counts of the valid (or regularly padded) positions
from tinygrad import Tensor, dtypes
x = Tensor([float((i * 7) % 11 - 5) for i in range(50)]).reshape(1, 2, 5, 5).realize()
a = x.avg_pool2d(kernel_size=(2, 2), ceil_mode=True)
b = x.avg_pool2d(kernel_size=(3, 3), stride=2, padding=1, count_include_pad=False)
c = x.avg_pool2d(kernel_size=(3, 3), stride=2, padding=1, ceil_mode=True)
RESULT = {"avg_ceil": a.tolist(), "avg_no_pad": b.tolist(), "avg_ceil_pad": c.tolist()}
print(RESULT)
