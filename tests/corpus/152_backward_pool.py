# max_pool2d and avg_pool2d backward (2x2 and 3x3 stride 2 windows)
from tinygrad import Tensor
x = Tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0], [0.0, 2.0, 6.0, 7.0], [9.0, 1.0, 3.0, 2.0]]]])
gmax, = x.max_pool2d(2).sum().gradient(x)
gavg, = (x.avg_pool2d(kernel_size=(3, 3), stride=1) * Tensor([[[[1.0, 2.0], [3.0, 4.0]]]])).sum().gradient(x)
RESULT = {"max": gmax.tolist(), "avg": gavg.tolist()}
print(RESULT)
