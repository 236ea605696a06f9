/** Conversions between temperature scales. */
public final class Temperature {
    private Temperature() {}

    /** Degrees Celsius to degrees Fahrenheit. */
    public static double toFahrenheit(double celsius) {
        return celsius * 9 / 5 - 32;
    }
}
