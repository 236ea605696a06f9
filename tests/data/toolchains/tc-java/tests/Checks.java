/** java Checks NAME: exit 0 when the named check holds. */
public final class Checks {
    public static void main(String[] args) {
        boolean ok;
        switch (args[0]) {
            case "freezing": ok = Temperature.toFahrenheit(0) == 32.0; break;
            case "boiling": ok = Temperature.toFahrenheit(100) == 212.0; break;
            case "minus_forty": ok = Temperature.toFahrenheit(-40) == -40.0; break;
            default: System.err.println("no check " + args[0]); System.exit(2); return;
        }
        System.exit(ok ? 0 : 1);
    }
}
