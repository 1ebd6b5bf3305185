package io.gpupool.optimize;

import com.google.ortools.Loader;
import com.google.ortools.sat.CpModel;
import com.google.ortools.sat.CpSolver;
import com.google.ortools.sat.CpSolverStatus;
import com.google.ortools.sat.IntVar;
import com.google.ortools.sat.LinearExpr;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class OrToolsLoadTest {
    @Test
    void loads() {
        Loader.loadNativeLibraries();
        CpModel m = new CpModel();
        IntVar x = m.newIntVar(0, 10, "x");
        IntVar y = m.newIntVar(0, 10, "y");
        m.addLessOrEqual(LinearExpr.sum(new IntVar[]{x, y}), 7);
        m.maximize(LinearExpr.weightedSum(new IntVar[]{x, y}, new long[]{2, 3}));
        CpSolver s = new CpSolver();
        assertThat(s.solve(m)).isEqualTo(CpSolverStatus.OPTIMAL);
        assertThat(s.objectiveValue()).isEqualTo(21.0);
    }
}
