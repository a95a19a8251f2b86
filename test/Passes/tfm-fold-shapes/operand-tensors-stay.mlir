// RUN: wafer-opt %s --pass-pipeline='builtin.module(func.func(tfm-fold-shapes))' | FileCheck %s

// A fold reads its operands' tensors by reference while converting the
// next operand grows the pass's table of tensors: here the second operand
// of the last add is the table's 48th entry, where an LLVM DenseMap of 64
// buckets grows (its tensors held by value moved, and the first operand's
// read freed memory). Two negs (2 entries each) and 14 adds of two fresh
// constants (3 each: both operands and the sum) come first.
// CHECK-LABEL: func.func @main
// CHECK: %[[SUM:.*]] = tfm.constant dense<[2.900000e+01, 3.100000e+01]> : tensor<2xf32>
// CHECK: return %[[SUM]]
func.func @main() -> tensor<2xf32> {
  %c1 = tfm.constant dense<[100.0, 101.0]> : tensor<2xf32>
  %n0 = tfm.neg %c1 : tensor<2xf32>
  %c2 = tfm.constant dense<[101.0, 102.0]> : tensor<2xf32>
  %n1 = tfm.neg %c2 : tensor<2xf32>
  %c3 = tfm.constant dense<[200.0, 201.0]> : tensor<2xf32>
  %c4 = tfm.constant dense<[201.0, 202.0]> : tensor<2xf32>
  %s0 = tfm.add %c3, %c4 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c5 = tfm.constant dense<[202.0, 203.0]> : tensor<2xf32>
  %c6 = tfm.constant dense<[203.0, 204.0]> : tensor<2xf32>
  %s1 = tfm.add %c5, %c6 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c7 = tfm.constant dense<[204.0, 205.0]> : tensor<2xf32>
  %c8 = tfm.constant dense<[205.0, 206.0]> : tensor<2xf32>
  %s2 = tfm.add %c7, %c8 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c9 = tfm.constant dense<[206.0, 207.0]> : tensor<2xf32>
  %c10 = tfm.constant dense<[207.0, 208.0]> : tensor<2xf32>
  %s3 = tfm.add %c9, %c10 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c11 = tfm.constant dense<[208.0, 209.0]> : tensor<2xf32>
  %c12 = tfm.constant dense<[209.0, 210.0]> : tensor<2xf32>
  %s4 = tfm.add %c11, %c12 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c13 = tfm.constant dense<[210.0, 211.0]> : tensor<2xf32>
  %c14 = tfm.constant dense<[211.0, 212.0]> : tensor<2xf32>
  %s5 = tfm.add %c13, %c14 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c15 = tfm.constant dense<[212.0, 213.0]> : tensor<2xf32>
  %c16 = tfm.constant dense<[213.0, 214.0]> : tensor<2xf32>
  %s6 = tfm.add %c15, %c16 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c17 = tfm.constant dense<[214.0, 215.0]> : tensor<2xf32>
  %c18 = tfm.constant dense<[215.0, 216.0]> : tensor<2xf32>
  %s7 = tfm.add %c17, %c18 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c19 = tfm.constant dense<[216.0, 217.0]> : tensor<2xf32>
  %c20 = tfm.constant dense<[217.0, 218.0]> : tensor<2xf32>
  %s8 = tfm.add %c19, %c20 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c21 = tfm.constant dense<[218.0, 219.0]> : tensor<2xf32>
  %c22 = tfm.constant dense<[219.0, 220.0]> : tensor<2xf32>
  %s9 = tfm.add %c21, %c22 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c23 = tfm.constant dense<[220.0, 221.0]> : tensor<2xf32>
  %c24 = tfm.constant dense<[221.0, 222.0]> : tensor<2xf32>
  %s10 = tfm.add %c23, %c24 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c25 = tfm.constant dense<[222.0, 223.0]> : tensor<2xf32>
  %c26 = tfm.constant dense<[223.0, 224.0]> : tensor<2xf32>
  %s11 = tfm.add %c25, %c26 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c27 = tfm.constant dense<[224.0, 225.0]> : tensor<2xf32>
  %c28 = tfm.constant dense<[225.0, 226.0]> : tensor<2xf32>
  %s12 = tfm.add %c27, %c28 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c29 = tfm.constant dense<[226.0, 227.0]> : tensor<2xf32>
  %c30 = tfm.constant dense<[227.0, 228.0]> : tensor<2xf32>
  %s13 = tfm.add %c29, %c30 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c31 = tfm.constant dense<[14.0, 15.0]> : tensor<2xf32>
  %c32 = tfm.constant dense<[15.0, 16.0]> : tensor<2xf32>
  %s14 = tfm.add %c31, %c32 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %s14 : tensor<2xf32>
}
