# a zero stride or kernel size is an error naming it (the reference: ZeroDivisionError), not a SIGFPE
from tinygrad import Tensor
x = Tensor.ones(1, 1, 4, 4)
for name, f in [("conv2d stride=0", lambda: x.conv2d(Tensor.ones(1, 1, 2, 2), stride=0)),
                ("max_pool2d kernel_size=0", lambda: x.max_pool2d(kernel_size=0)),
                ("avg_pool2d stride=0", lambda: x.avg_pool2d(stride=0))]:
  try:
    f().realize()
    print(name, "no error")
  except ZeroDivisionError:
    print(name, "ZeroDivisionError")
