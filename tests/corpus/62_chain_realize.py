# realize between elementwise steps: each realize is its own schedule
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]).realize()
y = (x * 2).realize()
z = (y + x).realize()
w = z.reshape(2, 4).sum(axis=1).realize()
RESULT = {"z": z.tolist(), "w": w.tolist()}
print(RESULT)
