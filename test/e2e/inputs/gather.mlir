func.func @main(%ids: tensor<2xi64> {tfm.name = "ids"}) -> tensor<2x4xf32> {
  %t = tfm.constant dense<1.0> : tensor<3x4xf32>
  %e = tfm.gather %t[%ids] {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %e : tensor<2x4xf32>
}
