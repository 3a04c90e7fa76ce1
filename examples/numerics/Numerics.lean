import Numerics.Euler
import Numerics.RungeKutta
