# reshape -> expand -> permute -> shrink chain materialized
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).realize()
y = x.reshape(2, 3, 1).expand(2, 3, 2).permute(2, 0, 1)[:, :, 1:]
RESULT = y.tolist()
print(RESULT)
