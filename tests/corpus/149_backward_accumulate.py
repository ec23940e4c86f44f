# two backward calls accumulate into .grad; zeroing with grad=None starts again
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0])
(x * x).sum().backward()
(x * 3).sum().backward()
acc = x.grad.tolist()
x.grad = None
(x.exp()).sum().backward()
RESULT = {"acc": acc, "fresh": x.grad.tolist()}
print(RESULT)
