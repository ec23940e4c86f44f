# rand with contiguous=False fused into an elementwise expression (no separate rand kernel)
from tinygrad import Tensor
Tensor.manual_seed(11)
x = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).realize()
y = (Tensor.rand(6, contiguous=False) * 10).floor() + x
RESULT = {"y": y.tolist()}
print(RESULT)
