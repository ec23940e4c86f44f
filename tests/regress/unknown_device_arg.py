# error: unknown device 'NOPE': the devices are CPU, CPU:LLVM, INTERP
# a device argument that names no device is an error, never a run on the CPU
from tinygrad import Tensor
print(Tensor([1, 2], device='NOPE').tolist())
