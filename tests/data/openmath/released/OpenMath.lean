import OpenMath.RungeKutta
import OpenMath.ButcherGroup
