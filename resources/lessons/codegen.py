# Lesson 6: codegen turns a kernel AST into a program: opts, then lowering passes
from tinygrad import Tensor
a = Tensor.arange(64 * 64).reshape(64, 64).float() / 100
b = Tensor.arange(64 * 64).reshape(64, 64).float() / 100
print((a @ b).tolist()[0][:4])
